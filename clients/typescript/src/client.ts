// The console's HTTP API over the platform's fetch (SPEC X3): no runtime
// dependency, Node 18 or newer.
import type {
  AgentRequest,
  AgentView,
  AnswerReply,
  AnswerRequest,
  ApprovalRequest,
  CancelReply,
  DecisionReply,
  ErrorBody,
  Event,
  ExtendReply,
  InboxEntry,
  Message,
  MessageReply,
  PendingCall,
  RoundInput,
  RoundResult,
  RunningRound,
  RunState,
  ToolCall,
  ToolResultReply,
  ToolResultRequest,
  Toolset,
} from "./api-types.js";

/** The kinds of pending calls that wait for a decision (`onApproval`); the
 * others (`answer`, `tool_result`, `elicitation`) wait for something else
 * (`onWait`). */
const DECISION_KINDS = new Set(["", "confirm", "limit"]);

/**
 * An answer of the API that is not a success, or a request that got no
 * answer. `status` is the HTTP status (0 when the console could not be
 * reached), `code` the API's error code (`not_waiting`, `stale_approval`,
 * `invalid_args`, `invalid_input`, `forbidden`, ...; `network` when there
 * was no answer, `timeout` when `runRound` gave up) and `message` the
 * console's sentence.
 */
export class ToolroundError extends Error {
  readonly status: number;
  readonly code: string;
  readonly body: unknown;
  constructor(status: number, code: string, message = "", body?: unknown) {
    super(message ? `${status} ${code}: ${message}` : `${status} ${code}`);
    this.name = "ToolroundError";
    this.status = status;
    this.code = code;
    this.body = body;
  }
  /** The console's sentence alone. */
  get detail(): string {
    const b = this.body as Partial<ErrorBody> | undefined;
    return (b && typeof b === "object" && typeof b.message === "string" && b.message) || "";
  }
}

/** What `onApproval` returns for a waiting call: approve or deny it, with a
 * reason, or approve it with edited arguments (`args`, an object or the
 * text of a JSON object). */
export interface Decision {
  approve: boolean;
  reason?: string;
  args?: Record<string, unknown> | string;
  remember?: boolean;
  pattern?: string;
  allowTurn?: boolean;
}

/** `onApproval`'s answer: a Decision, true/false, or null/undefined to leave
 * the call waiting (for a person on the console). */
export type DecisionLike = Decision | boolean | null | undefined;

export type OnApproval = (pending: PendingCall) => DecisionLike | Promise<DecisionLike>;
/** What `onWait` returns for a client tool's call (pending kind
 * `tool_result`): the tool's result as the model will read it, and whether
 * the tool failed (the call's status is then `error`). */
export interface ClientToolResult {
  content: string;
  isError?: boolean;
}

/** For `ask_user` a string or strings returned are sent as the answers; for
 * an elicitation an object is the accepted form, `"decline"` or `"cancel"`
 * refuses it; for a client tool a ClientToolResult (or a string, the content
 * of a success) is sent as its result. null/undefined leaves the call
 * waiting. */
export type OnWait = (pending: PendingCall) => unknown;

export interface FollowOptions {
  onApproval?: OnApproval;
  onWait?: OnWait;
  /** Gives up after this long (ms) with a ToolroundError `timeout`; default none. */
  timeoutMs?: number;
  /** How often the round is read when no event wakes the loop (ms, default 2000). */
  pollMs?: number;
  signal?: AbortSignal;
}

export interface EventsOptions {
  /** Replays the events the session's stream keeps first (`?after=0`). */
  fromStart?: boolean;
  /** Resumes after the event with this id. */
  after?: string;
  /** Ends the iteration (also while it waits for an event). */
  signal?: AbortSignal;
  /** The pause before reconnecting after a dropped connection (ms, default 2000). */
  reconnectMs?: number;
  /** A connection that gives nothing for this long is taken as dropped
   * (ms, default 45000; the console pings every 15 s). */
  idleMs?: number;
}

export interface ApproveOptions {
  reason?: string;
  args?: Record<string, unknown> | string;
  remember?: boolean;
  pattern?: string;
  allowTurn?: boolean;
  /** With remember: the rule approves at most this many calls of the run (B2). */
  upTo?: number;
  /** With remember: what a command the rule approves may change (T12):
   * "read-only" (the workspace is read-only to it) or "write"; default
   * read-only for a read-only form of the call, else write. */
  scope?: "read-only" | "write";
  /** The pending entry's wait_id: a decision for another wait of the call
   * is refused with 409 `stale_wait` (B1). */
  waitId?: string | null;
}

export interface AgentOptions {
  provider?: string;
  autoApprove?: boolean;
  maxRounds?: number;
  confirmTimeoutSeconds?: number;
}

export interface ClientOptions {
  /** Each request's timeout (ms, default 60000). */
  timeoutMs?: number;
  /** How often a request that is safe to repeat is retried after a network error (default 3). */
  retries?: number;
  /** The first pause between retries (ms, default 250), doubled each time. */
  backoffMs?: number;
  /** The fetch to use (default the platform's). */
  fetch?: typeof fetch;
}

/** Round input fields that every round of a run handle gets. */
export type RoundDefaults = Partial<Omit<RoundInput, "session_id" | "run_id" | "round" | "assistant" | "state">>;

export interface RunOptions extends RoundDefaults {
  /** The run state of the first round (default null: the provider's tools). */
  state?: RunState;
}

/** The workflow id of a round: `toolround/<session>/<run>/<round>`. */
export function roundWorkflowId(sessionId: string, runId: string, round: number): string {
  return `toolround/${sessionId}/${runId}/${round}`;
}

/** The workflow id of an agent run: `agentrun/<session>/<run>`. */
export function agentWorkflowId(sessionId: string, runId: string): string {
  return `agentrun/${sessionId}/${runId}`;
}

/** Whether a round view is a finished round's result. */
export function isFinished(view: RoundResult | RunningRound): view is RoundResult {
  return !("status" in view && (view.status === "running" || view.status === "failed"));
}

class NetworkError extends Error {}

/**
 * A client of the console at `baseUrl` with a bearer `token`.
 *
 * Network errors (no connection, a connection dropped before the answer, a
 * timeout) are retried `retries` times, with a growing pause, for the
 * requests that are safe to repeat: every GET, and the submissions keyed by
 * their workflow id (`submitRound`, `waitRound`, `startAgent`), which attach
 * to the same workflow when they land twice. Decisions, answers, tool
 * results, messages, extensions and cancellations are sent once: a network error there throws
 * ToolroundError with status 0 and code `network`. An answer of the console
 * is never retried.
 */
export class Client {
  readonly baseUrl: string;
  readonly token: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(baseUrl: string, token = "", options: ClientOptions = {}) {
    if (!baseUrl) {
      throw new TypeError("baseUrl is required (the console's address, e.g. http://127.0.0.1:8780)");
    }
    let u: URL;
    try {
      u = new URL(baseUrl);
    } catch {
      throw new TypeError(`baseUrl ${JSON.stringify(baseUrl)} is not a URL (e.g. http://127.0.0.1:8780)`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`baseUrl ${JSON.stringify(baseUrl)} is not an http or https URL`);
    }
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = token;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retries = options.retries ?? 3;
    this.backoffMs = options.backoffMs ?? 250;
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("no fetch: Node 18 or newer has one, or pass options.fetch");
    this.fetchImpl = f;
  }

  // -- requests ---------------------------------------------------------

  private headers(accept: string, body: boolean): Record<string, string> {
    const h: Record<string, string> = { Accept: accept };
    if (this.token) h.Authorization = `Bearer ${this.token}`;
    if (body) h["Content-Type"] = "application/json";
    return h;
  }

  private async once(method: string, path: string, body: unknown, timeoutMs: number): Promise<unknown> {
    let res: Response;
    let raw: string;
    try {
      res = await this.fetchImpl(this.baseUrl + path, {
        method,
        headers: this.headers("application/json", body !== undefined),
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      raw = await res.text();
    } catch (e) {
      throw new NetworkError(describe(e), { cause: e });
    }
    if (!res.ok) throw apiError(res.status, raw);
    if (!raw.trim()) return null;
    try {
      return JSON.parse(raw);
    } catch {
      throw new ToolroundError(res.status, "bad_response", `the console's answer is not JSON: ${raw.slice(0, 200)}`);
    }
  }

  private async request<T>(method: string, path: string, opts: { body?: unknown; idempotent?: boolean; timeoutMs?: number } = {}): Promise<T> {
    const attempts = 1 + (opts.idempotent ? this.retries : 0);
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.once(method, path, opts.body, opts.timeoutMs ?? this.timeoutMs)) as T;
      } catch (e) {
        if (!(e instanceof NetworkError)) throw e;
        if (attempt + 1 >= attempts) throw new ToolroundError(0, "network", `${method} ${path}: ${e.message}`);
        await sleep(this.backoffMs * 2 ** attempt);
      }
    }
  }

  // -- rounds -----------------------------------------------------------

  /** The API's OpenAPI 3.1 document. */
  async openapi(): Promise<Record<string, unknown>> {
    return this.request("GET", "/api/v1/openapi.json", { idempotent: true });
  }

  /** The provider's tools array (F3), as `starter tools --provider P
   * --format F` prints it for the built-in tools: `{provider, format, tools,
   * deferred, turn_context}`, `tools` in the format `openai` (the default),
   * `anthropic` or `responses`. With `worker: true` a running worker gives
   * its own list: its MCP servers' tools and your own tools (Y2) too, and
   * `queues`, the state of each tool queue it runs. */
  async tools(options: { provider: string; format?: Toolset["format"]; worker?: boolean }): Promise<Toolset> {
    requireObject(options, "the tools options");
    if (typeof options.provider !== "string" || !options.provider) throw new TypeError("provider is required");
    const q = new URLSearchParams({ provider: options.provider });
    if (options.format !== undefined) q.set("format", options.format);
    if (options.worker) q.set("worker", "true");
    return this.request("GET", "/api/v1/tools?" + q.toString(), { idempotent: true });
  }

  /** Submits a round and returns its workflow id. A round submitted twice
   * attaches to the same workflow, so this is retried on network errors. */
  async submitRound(input: RoundInput): Promise<string> {
    requireObject(input, "the round input");
    const out = await this.request<{ workflow_id: string }>("POST", "/api/v1/rounds", { body: input, idempotent: true });
    return out.workflow_id;
  }

  /** The round's result when it has finished, else `{workflow_id, status:
   * "running", pending, progress}` (or `status: "failed"` with `error`). */
  async getRound(workflowId: string): Promise<RoundResult | RunningRound> {
    return this.request("GET", "/api/v1/rounds/" + pathOf(workflowId, "workflowId"), { idempotent: true });
  }

  /** Submits a round and waits for its result (`?wait=1`). */
  async waitRound(input: RoundInput, timeoutMs?: number): Promise<RoundResult> {
    requireObject(input, "the round input");
    return this.request("POST", "/api/v1/rounds?wait=1", {
      body: input,
      idempotent: true,
      timeoutMs: timeoutMs ?? Math.max(this.timeoutMs, 600_000),
    });
  }

  /**
   * Submits a round, follows its events and returns its result.
   *
   * Each call that waits for a decision (an approval or a limit) is given
   * once to `onApproval(pending)`, which returns a Decision (or true/false),
   * or null to leave it waiting for a person on the console. Each call that
   * waits for something else (`ask_user`, elicitation, a client tool) is
   * given once to `onWait(pending)`; for `ask_user` the string or strings it
   * returns are sent as the answers; for an MCP server's request (kind
   * `elicitation`) an object is the accepted form, `"decline"` or `"cancel"`
   * refuses it; for a client tool (kind `tool_result`) a ClientToolResult
   * `{content, isError}` or a string (the content of a success) is sent as
   * the tool's result, with the pending entry's wait_id. null or undefined
   * leaves the call waiting.
   */
  async runRound(input: RoundInput, options: FollowOptions = {}): Promise<RoundResult> {
    const wid = await this.submitRound(input);
    return this.followRound(wid, input.session_id, options);
  }

  /** Follows a submitted round to its result, as `runRound` does. */
  async followRound(workflowId: string, sessionId = "", options: FollowOptions = {}): Promise<RoundResult> {
    const session = sessionId || workflowId.split("/")[1] || "";
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const waker = new Waker();
    // The stream only hurries the loop; polling goes on without it.
    void (async () => {
      try {
        for await (const ev of this.events(session, { signal: stop.signal })) {
          if (ev.workflow_id === workflowId) waker.wake();
        }
      } catch {
        /* polling goes on */
      }
    })();
    const handled = new Set<string>();
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    try {
      for (;;) {
        if (options.signal?.aborted) throw new ToolroundError(0, "aborted", `following ${workflowId} was aborted`);
        waker.reset();
        const view = await this.getRound(workflowId);
        if (isFinished(view)) return view;
        if (view.status === "failed") {
          throw new ToolroundError(200, "round_failed", view.error || "the round failed", view);
        }
        for (const p of view.pending ?? []) {
          const key = JSON.stringify([p.call_id, p.approval_id ?? "", p.kind ?? "", p.wait_id ?? ""]);
          if (handled.has(key)) continue;
          handled.add(key);
          await this.handle(workflowId, p, options);
        }
        if (deadline !== undefined && Date.now() > deadline) {
          throw new ToolroundError(0, "timeout", `round ${workflowId} still runs after ${options.timeoutMs} ms`, view);
        }
        await waker.wait(options.pollMs ?? 2000);
      }
    } finally {
      stop.abort();
      options.signal?.removeEventListener("abort", onAbort);
    }
  }

  private async handle(workflowId: string, p: PendingCall, options: FollowOptions): Promise<void> {
    const kind = p.kind ?? "";
    try {
      if (DECISION_KINDS.has(kind)) {
        if (!options.onApproval) return;
        let d = await options.onApproval(p);
        if (d === null || d === undefined) return;
        if (typeof d === "boolean") d = { approve: d };
        if (d.approve) {
          await this.approve(workflowId, p.call_id, p.approval_id, { ...d, waitId: p.wait_id });
        } else {
          await this.deny(workflowId, p.call_id, p.approval_id, d.reason, p.wait_id);
        }
        return;
      }
      if (!options.onWait) return;
      const out = await options.onWait(p);
      if (kind === "answer" && out !== null && out !== undefined) {
        const answers = typeof out === "string" ? [out] : Array.from(out as Iterable<unknown>, String);
        await this.answer(workflowId, p.call_id, answers);
      }
      if (kind === "elicitation" && out !== null && out !== undefined) {
        // "decline" or "cancel", or the form's values to accept.
        if (out === "decline" || out === "cancel") {
          await this.answerElicitation(workflowId, p.call_id, out, { waitId: p.wait_id });
        } else if (typeof out === "object") {
          await this.answerElicitation(workflowId, p.call_id, "accept", { content: out as Record<string, unknown>, waitId: p.wait_id });
        }
      }
      if (kind === "tool_result" && out !== null && out !== undefined) {
        const r = toolResultOf(out);
        if (!r) {
          throw new TypeError(
            `onWait returned ${describeValue(out)} for the client tool call ${p.call_id} (${p.tool}): return {content, isError}, a string or null`,
          );
        }
        await this.submitToolResult(workflowId, p.call_id, r.content, { isError: r.isError, waitId: p.wait_id });
      }
    } catch (e) {
      // The call stopped waiting meanwhile (decided elsewhere, or its
      // deadline passed): the round's result tells the rest.
      if (e instanceof ToolroundError && e.code === "not_waiting") return;
      throw e;
    }
  }

  // -- people -----------------------------------------------------------

  /** The rounds that wait for a person, of one session or all. */
  async inbox(session?: string): Promise<InboxEntry[]> {
    const q = session ? `?session=${encodeURIComponent(session)}` : "";
    return this.request("GET", "/api/v1/inbox" + q, { idempotent: true });
  }

  /** Approves a waiting call (needs an approver token); `args` approves it
   * with edited arguments. A repeat of a decision that already landed
   * answers `{status: "already_decided", ...}`. */
  async approve(workflowId: string, callId: string, approvalId?: string | null, options: ApproveOptions = {}): Promise<DecisionReply> {
    const body: ApprovalRequest = { workflow_id: workflowId, call_id: callId, approve: true };
    if (approvalId) body.approval_id = approvalId;
    if (options.reason) body.reason = options.reason;
    if (options.args !== undefined) body.args = options.args;
    if (options.remember) body.remember = true;
    if (options.pattern) body.pattern = options.pattern;
    if (options.allowTurn) body.allow_turn = true;
    if (options.upTo !== undefined) body.up_to = options.upTo;
    if (options.scope) body.scope = options.scope;
    if (options.waitId) body.wait_id = options.waitId;
    return this.request("POST", "/api/v1/approvals", { body });
  }

  /** Denies a waiting call (needs an approver token); `waitId` as for approve. */
  async deny(workflowId: string, callId: string, approvalId?: string | null, reason?: string, waitId?: string | null): Promise<DecisionReply> {
    const body: ApprovalRequest = { workflow_id: workflowId, call_id: callId, approve: false };
    if (approvalId) body.approval_id = approvalId;
    if (reason) body.reason = reason;
    if (waitId) body.wait_id = waitId;
    return this.request("POST", "/api/v1/approvals", { body });
  }

  /** Answers an `ask_user` call. */
  async answer(workflowId: string, callId: string, answers: string[]): Promise<AnswerReply> {
    return this.request("POST", "/api/v1/answers", { body: { workflow_id: workflowId, call_id: callId, answers: [...answers] } });
  }

  /** Answers a call whose MCP server asks for input (pending kind
   * `elicitation`): `accept` with the requested form's `content` (checked
   * against its schema: 400 `invalid_answer`), `decline` or `cancel`.
   * `waitId` (the pending entry's) refuses an answer for another wait
   * with 409 `stale_wait`. */
  async answerElicitation(workflowId: string, callId: string, action: "accept" | "decline" | "cancel",
    options: { content?: Record<string, unknown>; waitId?: string | null } = {}): Promise<AnswerReply> {
    const body: AnswerRequest = { workflow_id: workflowId, call_id: callId, action };
    if (options.content !== undefined) body.content = options.content;
    if (options.waitId) body.wait_id = options.waitId;
    return this.request("POST", "/api/v1/answers", { body });
  }

  /** Sends a client tool's result (pending kind `tool_result`, Y5):
   * `content` as the model will read it, `isError` when the tool failed. An
   * `agent` token in the session's scope may send it. `waitId` (the pending
   * entry's) refuses a result for another wait with 409 `stale_wait`; a call
   * that does not wait for a result is 404 `not_waiting`. */
  async submitToolResult(workflowId: string, callId: string, content: string,
    options: { isError?: boolean; waitId?: string | null } = {}): Promise<ToolResultReply> {
    const body: ToolResultRequest = { workflow_id: workflowId, call_id: callId, content };
    if (options.isError) body.is_error = true;
    if (options.waitId) body.wait_id = options.waitId;
    return this.request("POST", "/api/v1/tool-results", { body });
  }

  /** Pushes a waiting call's deadline by `seconds`. */
  async extend(workflowId: string, callId: string, seconds: number): Promise<ExtendReply> {
    return this.request("POST", "/api/v1/extend", { body: { workflow_id: workflowId, call_id: callId, seconds: Math.trunc(seconds) } });
  }

  /** Cancels a round or an agent run. */
  async cancel(workflowId: string): Promise<CancelReply> {
    return this.request("POST", "/api/v1/cancel", { body: { workflow_id: workflowId } });
  }

  // -- events -----------------------------------------------------------

  /**
   * The session's events as they happen. A dropped connection is
   * reconnected with `Last-Event-ID` set to the last event given, so no
   * event is lost or given twice. An answer of the console that is not a
   * success (401, 403, ...) throws ToolroundError. Leave the loop with
   * `break`, or abort `signal` to end it while it waits.
   */
  async *events(session: string, options: EventsOptions = {}): AsyncGenerator<Event, void, undefined> {
    const path = "/api/v1/sessions/" + encodeURIComponent(session) + "/events";
    const signal = options.signal;
    const reconnectMs = options.reconnectMs ?? 2000;
    const idleMs = options.idleMs ?? 45_000;
    let last = options.after;
    while (!signal?.aborted) {
      const conn = new AbortController();
      const onAbort = () => conn.abort();
      signal?.addEventListener("abort", onAbort, { once: true });
      const headers = this.headers("text/event-stream", false);
      let url = this.baseUrl + path;
      if (last) headers["Last-Event-ID"] = last;
      else if (options.fromStart) url += "?after=0";
      try {
        let res: Response | undefined;
        try {
          res = await this.fetchImpl(url, { headers, signal: conn.signal });
        } catch {
          res = undefined; // no connection: try again after the pause
        }
        if (res && !res.ok) throw apiError(res.status, await res.text().catch(() => ""));
        if (res?.body) {
          try {
            for await (const item of sse(res.body, idleMs, conn)) {
              if (item.data === undefined) continue;
              let ev: Event;
              try {
                ev = JSON.parse(item.data) as Event;
              } catch {
                continue;
              }
              if (item.id) last = item.id;
              yield ev;
              if (signal?.aborted) return;
            }
          } catch {
            /* dropped: reconnect */
          }
        }
      } finally {
        conn.abort();
        signal?.removeEventListener("abort", onAbort);
      }
      await sleep(reconnectMs, signal);
    }
  }

  // -- agents -----------------------------------------------------------

  /** Starts an agent run (or attaches to it) and returns its workflow id,
   * `agentrun/<session>/<run>`; retried on network errors. */
  async startAgent(sessionId: string, runId: string, task: string, options: AgentOptions = {}): Promise<string> {
    const body: AgentRequest = { session_id: sessionId, run_id: runId, task };
    if (options.provider) body.provider = options.provider;
    if (options.autoApprove) body.auto_approve = true;
    if (options.maxRounds !== undefined) body.max_rounds = options.maxRounds;
    if (options.confirmTimeoutSeconds !== undefined) body.confirm_timeout_seconds = options.confirmTimeoutSeconds;
    const out = await this.request<{ workflow_id: string }>("POST", "/api/v1/agents", { body, idempotent: true });
    return out.workflow_id;
  }

  /** The agent run's status and conversation so far. */
  async getAgent(workflowId: string): Promise<AgentView> {
    return this.request("GET", "/api/v1/agents/" + pathOf(workflowId, "workflowId"), { idempotent: true });
  }

  /** Sends a user message to a running agent run. */
  async sendMessage(workflowId: string, text: string): Promise<MessageReply> {
    return this.request("POST", "/api/v1/agents/" + pathOf(workflowId, "workflowId") + "/messages", { body: { text } });
  }

  // -- the run handle ---------------------------------------------------

  /** A handle on the run `sessionId`/`runId` (U9): it keeps the run state
   * and the round number. `options` are round input fields every round gets
   * (`provider`, `client_tools`, ...) and the first round's `state`. */
  run(sessionId: string, runId: string, options: RunOptions = {}): Run {
    return new Run(this, sessionId, runId, options);
  }

  /** Reopens a run after a client crash at its last finished round (see
   * `Run.resume`). */
  async resumeRun(sessionId: string, runId: string, options: RunOptions = {}): Promise<Run> {
    const r = this.run(sessionId, runId, options);
    await r.resume();
    return r;
  }
}

/**
 * One agent run's rounds (U9): `round(assistant)` submits the model's calls
 * as the next round with the state of the previous one, follows it and
 * returns its result. `state` and `number` (the last finished round, 0
 * before the first) are kept here; rounds go one at a time.
 */
export class Run {
  readonly client: Client;
  readonly sessionId: string;
  readonly runId: string;
  readonly defaults: RoundDefaults;
  number = 0;
  state: RunState = null;
  last: RoundResult | undefined;
  private busy = false;

  constructor(client: Client, sessionId: string, runId: string, options: RunOptions = {}) {
    if (!sessionId || !runId) throw new TypeError("a run needs a session id and a run id");
    const { state, ...defaults } = options;
    this.client = client;
    this.sessionId = sessionId;
    this.runId = runId;
    this.defaults = { provider: "openai", ...defaults };
    this.state = state ?? null;
  }

  /** The workflow id the next round gets. */
  get nextWorkflowId(): string {
    return roundWorkflowId(this.sessionId, this.runId, this.number + 1);
  }

  /** The next round's input for an assistant message. */
  input(assistant: Message, fields: Partial<RoundInput> = {}): RoundInput {
    return {
      session_id: this.sessionId,
      run_id: this.runId,
      round: this.number + 1,
      ...this.defaults,
      assistant,
      state: this.state,
      ...fields,
    };
  }

  /** Runs the model's calls as the next round. `assistant` is the assistant
   * message (with `tool_calls`) or the list of calls. */
  async round(assistant: Message | ToolCall[], options: FollowOptions & { fields?: Partial<RoundInput> } = {}): Promise<RoundResult> {
    if (this.busy) throw new Error(`run ${this.sessionId}/${this.runId}: round ${this.number + 1} still runs (a run's rounds go one at a time)`);
    const message: Message = Array.isArray(assistant) ? { role: "assistant", content: "", tool_calls: assistant } : assistant;
    this.busy = true;
    try {
      const inp = this.input(message, options.fields);
      const res = await this.client.runRound(inp, options);
      this.finished(inp.round ?? this.number + 1, res);
      return res;
    } finally {
      this.busy = false;
    }
  }

  private finished(n: number, res: RoundResult): void {
    this.number = n;
    this.state = res.state ?? null;
    this.last = res;
  }

  /** Finds the run's last finished round and takes its state; returns its
   * number (0 for a run with no round). A round that still runs is followed
   * to its end first. Throws ToolroundError (code `round_failed`) when the
   * last round failed: the run cannot go on from a state it does not have. */
  async resume(): Promise<number> {
    let n = 0;
    for (;;) {
      let view: RoundResult | RunningRound;
      try {
        view = await this.client.getRound(roundWorkflowId(this.sessionId, this.runId, n + 1));
      } catch (e) {
        if (e instanceof ToolroundError && e.status === 404) break;
        throw e;
      }
      n++;
      if (!isFinished(view)) {
        if (view.status === "failed") {
          throw new ToolroundError(200, "round_failed", `round ${n} of ${this.sessionId}/${this.runId} failed: ${view.error ?? ""}`, view);
        }
        view = await this.client.followRound(view.workflow_id, this.sessionId);
      }
      this.finished(n, view);
    }
    return this.number;
  }
}

// -- helpers ------------------------------------------------------------

// A client tool's result as onWait returned it: a string is a success's
// content; an object needs a string content and, if given, a boolean isError.
function toolResultOf(out: unknown): { content: string; isError: boolean } | undefined {
  if (typeof out === "string") return { content: out, isError: false };
  if (typeof out !== "object" || out === null || Array.isArray(out)) return undefined;
  const r = out as Partial<ClientToolResult>;
  if (typeof r.content !== "string") return undefined;
  if (r.isError !== undefined && typeof r.isError !== "boolean") return undefined;
  return { content: r.content, isError: r.isError === true };
}

function describeValue(v: unknown): string {
  if (Array.isArray(v)) return "an array";
  if (v !== null && typeof v === "object") return `an object with ${Object.keys(v).map((k) => JSON.stringify(k)).join(", ") || "no keys"}`;
  return typeof v;
}

function requireObject(v: unknown, what: string): void {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new TypeError(`${what} must be an object`);
}

// Workflow ids sit in the path with their slashes (toolround/s/r/1).
function pathOf(workflowId: string, what: string): string {
  if (typeof workflowId !== "string" || !workflowId) throw new TypeError(`${what} is required`);
  return workflowId.split("/").map(encodeURIComponent).join("/");
}

function apiError(status: number, raw: string): ToolroundError {
  let body: unknown;
  let code = `http_${status}`;
  let message = "";
  try {
    body = JSON.parse(raw);
    if (body && typeof body === "object") {
      const b = body as Partial<ErrorBody>;
      if (typeof b.error === "string" && b.error) code = b.error;
      if (typeof b.message === "string") message = b.message;
    }
  } catch {
    message = raw.slice(0, 500);
  }
  return new ToolroundError(status, code, message, body);
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    if (e.name === "TimeoutError") return "timed out";
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof Error && cause.message) return `${e.message} (${cause.message})`;
    return e.message;
  }
  return String(e);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Wakes a waiting loop early; a wake before the wait counts. */
class Waker {
  private woken = false;
  private resolve: (() => void) | undefined;
  reset(): void {
    this.woken = false;
  }
  wake(): void {
    this.woken = true;
    this.resolve?.();
  }
  wait(ms: number): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.resolve = undefined;
        resolve();
      }, ms);
      this.resolve = () => {
        clearTimeout(t);
        this.resolve = undefined;
        resolve();
      };
    });
  }
}

interface SSEItem {
  id?: string;
  data?: string;
}

/** The SSE items of a body: `{id, data}` per event, `{}` per comment (a
 * keep-alive). A body that gives nothing for `idleMs` is aborted. */
export async function* sse(body: ReadableStream<Uint8Array>, idleMs: number, conn: AbortController): AsyncGenerator<SSEItem> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let id: string | undefined;
  let data: string[] = [];
  let idle: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => conn.abort(), idleMs);
  };
  try {
    for (;;) {
      arm();
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, "");
        buf = buf.slice(nl + 1);
        if (line === "") {
          if (data.length) yield { id, data: data.join("\n") };
          id = undefined;
          data = [];
          continue;
        }
        if (line.startsWith(":")) {
          yield {};
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "id") id = value;
        else if (field === "data") data.push(value);
      }
    }
  } finally {
    clearTimeout(idle);
    reader.cancel().catch(() => {});
  }
}
