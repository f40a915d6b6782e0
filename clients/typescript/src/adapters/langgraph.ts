// A drop-in for LangGraph JS's ToolNode whose tool calls run as toolround
// rounds (SPEC X4).
//
// Each time the graph reaches the node, the tool calls of the last AI
// message run as one durable round of the run sessionId/runId, with
// toolround's approvals. A call that waits for a decision becomes
// LangGraph's `interrupt()`, with the pending call as its value: the graph
// stops (its checkpointer keeps where), and `new Command({resume: decision})`
// decides the call and goes on with the same round, in this process or in
// another one. The results come back as ToolMessages, one per call, in call
// order, with `status: "error"` for calls that did not run or failed and
// the round's result entry as `artifact`:
//
//   import { Command, MemorySaver } from "@langchain/langgraph";
//   import { toolsCondition } from "@langchain/langgraph/prebuilt";
//   import { RoundToolNode } from "toolround/langgraph";
//   graph.addNode("tools", new RoundToolNode(client, "s1", "r1"))
//        .addConditionalEdges("agent", toolsCondition, ["tools", END]);
//   const app = graph.compile({ checkpointer: new MemorySaver() });
//   let out = await app.invoke({ messages }, config);
//   while (out.__interrupt__?.length) {
//     const pending = out.__interrupt__[0].value;   // tool, arguments, reasons, ...
//     out = await app.invoke(new Command({ resume: { approve: true } }), config);
//   }
//
// The application's own tools (SPEC Y6): pass its LangChain tools (`tool()`
// of @langchain/core/tools with a zod 4 schema) in `tools`, as to ToolNode,
// with a `taskQueue` that the worker's TOOL_QUEUES names, and say which are
// `readOnly` (the others are side effects). A tool worker of toolround/tools
// in this process (the optional peer dependencies @temporalio/worker,
// @temporalio/client, @temporalio/activity and zod) serves them on that
// queue, and the model turn's calls, the app's and toolround's mixed, run as
// one round, with the round's approvals, dedupe, retries and operation ids:
//
//   const node = new RoundToolNode(client, "s1", "r1", {
//     tools: [lookupOrder, refundOrder], taskQueue: "orders", readOnly: ["lookup_order"] });
//   await node.ready();   // the tool worker serves them (the node waits for it too)
//   const model = chatModel.bindTools([lookupOrder, refundOrder, ...toolroundSpecs]);
//   ...
//   await node.close();   // stops the tool worker
//
// `serve: false` leaves the serving to a tool worker of yours that runs
// `serveTools(tools, {taskQueue, ...})` of this module.
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { ToolInputParsingException, type StructuredToolInterface } from "@langchain/core/tools";
import { interrupt as graphInterrupt } from "@langchain/langgraph";

import type * as ToolsModule from "../tools/index.js";

import type { PendingCall, RoundResult, RunningRound, ToolCall } from "../api-types.js";
import { isFinished, roundWorkflowId, ToolroundError, type Client, type Decision, type OnApproval, type OnWait, type Run, type RunOptions } from "../client.js";
import { functionOf, isError, openaiCall, outcomes, type ToolSpecLike } from "./common.js";
import { OwnToolWorker, waitListed, type OwnToolsServing, type OwnWorkerOptions } from "./worker.js";

export type { ToolSpecLike } from "./common.js";
export { OwnToolWorker, type OwnToolOptions, type OwnToolsServing, type OwnWorkerOptions } from "./worker.js";

export interface RoundToolNodeOptions extends RunOptions, OwnToolsServing {
  /** Asked first for a call that waits for a decision; null or undefined
   * from it interrupts (or, with `interrupt: false`, leaves the call to the
   * console). It is asked again for the same calls when the node runs
   * again after a resume, so it should answer the same. */
  onApproval?: OnApproval;
  onWait?: OnWait;
  /** false: the blocking way, the node waits in this process until a person
   * decides on the console (default true: `interrupt()`). */
  interrupt?: boolean;
  /** How often the round is read when no event wakes the loop (ms, default 2000). */
  pollMs?: number;
  /** The state's messages field, as for ToolNode (default `messages`). */
  messagesKey?: string;
  /** The node's name (default `tools`). */
  name?: string;
  /** The app's own LangChain tools, served on `taskQueue` (see
   * `toolroundTools`), and toolround tool specs (as `starter tools
   * --provider P` prints them), which are not served: their names tell
   * the run state which schemas the model has. With own tools the rounds'
   * provider is "claude-code" unless `provider` says otherwise (the model
   * has every schema from bindTools), and the run state starts with every
   * tool of `tools` fetched. */
  tools?: (StructuredToolInterface | ToolSpecLike)[];
  /** The own tools' task queue: one that the worker's TOOL_QUEUES names. */
  taskQueue?: string;
  /** Serve the own tools in this process (true, the default), or leave it
   * to a tool worker of yours (`serveTools`). */
  serve?: boolean;
  /** The in-process tool worker's options (address, toolroundTaskQueue, ...). */
  worker?: OwnWorkerOptions;
  /** How long to wait for the worker to list the own tools (60 000 ms). */
  readyTimeoutMs?: number;
}

/** The pending call an interrupt carries; `decision` is set on a call
 * decided since it was asked (its resume value is then not sent). */
export type InterruptValue = PendingCall & { workflow_id: string; decision?: string; by?: string };

type NodeInput = BaseMessage[] | Record<string, unknown>;
type NodeOutput = ToolMessage[] | Record<string, ToolMessage[]>;
type CallProgress = { call_id: string; tool?: string; decision?: string; by?: string };

const DECISION_KINDS = new Set(["", "confirm", "limit"]);
// The decisions a call has once a person was asked about it (T2): the
// calls a rule or AUTO_APPROVE decided were never asked.
const ASKED = new Set(["approved", "denied", "expired"]);
const DECISION_FIELDS = ["approve", "reason", "args", "remember", "pattern", "allowTurn"];

/** Runs the last AI message's tool calls as one round; takes the graph's
 * state (its `messagesKey` field) or a bare list of messages, as ToolNode.
 * One node is one run: its round numbers and state are kept by `runHandle`,
 * and a new process finds them on the server, so a graph resumed elsewhere
 * attaches to the same round (its workflow id) and nothing runs twice. */
export class RoundToolNode extends RunnableLambda<NodeInput, NodeOutput> {
  /** The run handle: `number` is the last finished round, `state` the run state. */
  readonly runHandle: Run;
  readonly messagesKey: string;
  private readonly client: Client;
  private readonly onApproval?: OnApproval;
  private readonly onWait?: OnWait;
  private readonly interrupts: boolean;
  private readonly pollMs: number;
  private placed = false;
  /** The app's own tools this node's rounds call. */
  readonly tools: StructuredToolInterface[];
  /** The tool worker this process runs for the own tools, once `ready()`
   * resolved (undefined without own tools or with `serve: false`). */
  worker: OwnToolWorker | undefined;
  private readonly serving: Promise<void>;

  constructor(client: Client, sessionId: string, runId: string, options: RoundToolNodeOptions = {}) {
    const { onApproval, onWait, messagesKey, name, interrupt, pollMs, tools = [], taskQueue, readOnly, toolOptions, serve, worker, readyTimeoutMs, ...runOptions } =
      options;
    const own = tools.filter(isLangChainTool);
    if (own.length) {
      if (!taskQueue) throw new TypeError("RoundToolNode: own tools need a taskQueue (one that the worker's TOOL_QUEUES names)");
      runOptions.provider ??= "claude-code";
    }
    if (tools.length) {
      const names = tools.map((t) => (isLangChainTool(t) ? t.name : functionOf(t).name));
      const state = (runOptions.state ?? {}) as { fetched?: string[] };
      runOptions.state = { ...state, fetched: [...new Set([...(state.fetched ?? []), ...names])].sort() } as never;
    }
    super({ func: (input: NodeInput) => this.invokeNode(input) });
    this.tools = own;
    this.name = name ?? "tools";
    this.client = client;
    this.runHandle = client.run(sessionId, runId, runOptions);
    this.messagesKey = messagesKey ?? "messages";
    this.onApproval = onApproval;
    this.onWait = onWait;
    this.interrupts = interrupt ?? true;
    this.pollMs = pollMs ?? 2000;
    this.serving = own.length && serve !== false ? this.startWorker(own, taskQueue!, { readOnly, toolOptions }, worker, readyTimeoutMs ?? 60_000) : Promise.resolve();
    this.serving.catch(() => undefined); // ready() and each run of the node tell it
  }

  private async startWorker(own: StructuredToolInterface[], taskQueue: string, serving: OwnToolsServing, options: OwnWorkerOptions | undefined, timeoutMs: number): Promise<void> {
    const tr: typeof ToolsModule = await import("../tools/index.js");
    const w = new OwnToolWorker(await toolroundTools(own, serving), taskQueue, tr.serve, options);
    try {
      await w.started();
      await waitListed(this.client, this.runHandle.defaults.provider ?? "claude-code", taskQueue, own.map((t) => t.name), timeoutMs);
    } catch (e) {
      await w.close();
      throw e;
    }
    this.worker = w;
  }

  /** Resolves once the toolround worker lists the own tools as served by
   * this process's tool worker (at once without one); rejects with what
   * kept it from serving (ServeRefused, its lines printed, or a timeout). */
  ready(): Promise<void> {
    return this.serving;
  }

  /** Stops the tool worker of the own tools, if this node started one
   * (calls in flight get 10 seconds). */
  async close(): Promise<void> {
    await this.serving.catch(() => undefined);
    await this.worker?.close();
  }

  private async invokeNode(input: NodeInput): Promise<NodeOutput> {
    await this.serving;
    const wrap = !Array.isArray(input);
    const messages = (wrap ? (input as Record<string, unknown>)[this.messagesKey] : input) as BaseMessage[] | undefined;
    if (!Array.isArray(messages)) throw new TypeError(`RoundToolNode: the state has no ${this.messagesKey} list`);
    const ai = [...messages].reverse().find((m) => AIMessage.isInstance(m)) as AIMessage | undefined;
    if (!ai || !ai.tool_calls?.length) throw new Error("RoundToolNode: the last AI message has no tool calls");
    const out = await this.toolMessages(ai);
    return wrap ? { [this.messagesKey]: out } : out;
  }

  /** Runs `ai`'s tool calls as the next round (or attaches to the round
   * that runs them already) and returns their ToolMessages. */
  async toolMessages(ai: AIMessage): Promise<ToolMessage[]> {
    const h = this.runHandle;
    // A call without an id gets one from its message's id (the graph's
    // reducer gives every message one), so that a resumed graph names it
    // the same in another process.
    const tcs = (ai.tool_calls ?? []).map((tc, i) => ({ ...tc, id: tc.id || (ai.id ? `call_${ai.id}_${i}` : `call_${h.number + 1}_${i}`) }));
    const calls = tcs.map((tc) => openaiCall(tc.id, tc.name, tc.args));
    const content = typeof ai.content === "string" ? ai.content : "";
    const [n, exists] = await this.place(calls.map((c) => c.id));
    const wid = roundWorkflowId(h.sessionId, h.runId, n);
    if (!exists) await this.client.submitRound(h.input({ role: "assistant", content, tool_calls: calls }, { round: n }));
    const res = await this.settle(wid, new Map(calls.map((c) => [c.id, c])));
    finished(h, n, res);
    const byId = outcomes(res);
    return tcs.map((tc) => {
      const got = byId.get(tc.id);
      return new ToolMessage({
        content: got?.content ?? "no result",
        tool_call_id: tc.id,
        name: tc.name,
        status: got && !isError(got.result) ? "success" : "error",
        artifact: got?.result,
      });
    });
  }

  // The round number of the calls `ids` and whether that round exists. The
  // first time in a process the run's rounds are read from the server: the
  // last one is these calls' round when its calls are these (a graph
  // resumed after a restart), else the next one is.
  private async place(ids: string[]): Promise<[number, boolean]> {
    const h = this.runHandle;
    if (this.placed) return [h.number + 1, false];
    for (;;) {
      const wid = roundWorkflowId(h.sessionId, h.runId, h.number + 1);
      let view: RoundResult | RunningRound;
      try {
        view = await this.client.getRound(wid);
      } catch (e) {
        if (e instanceof ToolroundError && e.status === 404) break;
        throw e;
      }
      if (JSON.stringify(callIds(view)) === JSON.stringify(ids)) {
        this.placed = true;
        return [h.number + 1, true];
      }
      if (!isFinished(view)) {
        if (view.status === "failed") throw new ToolroundError(200, "round_failed", `round ${wid} failed: ${view.error ?? ""}`, view);
        view = await this.client.followRound(wid, h.sessionId, { pollMs: this.pollMs });
      }
      finished(h, h.number + 1, view);
    }
    this.placed = true;
    return [h.number + 1, false];
  }

  // Follows the round `wid` to its result; each call a person is asked
  // about goes to onApproval, then to interrupt(). A resumed node runs
  // again from its start, and LangGraph hands the resume values to its
  // interrupt() calls by their order. So the node interrupts once for
  // every call a person was asked about in this round, in call order,
  // whether it still waits or was decided since (a decision for a call no
  // longer waiting is not sent): the order is the same in every run.
  private async settle(wid: string, calls: Map<string, ToolCall>): Promise<RoundResult> {
    const session = wid.split("/")[1] ?? "";
    const stop = new AbortController();
    let wake: (() => void) | undefined;
    let woken = false;
    // The stream only hurries the loop; polling goes on without it.
    void (async () => {
      try {
        for await (const ev of this.client.events(session, { signal: stop.signal })) {
          if (ev.workflow_id === wid) {
            woken = true;
            wake?.();
          }
        }
      } catch {
        /* polling goes on */
      }
    })();
    const asked = new Set<string>();
    const waited = new Set<string>();
    try {
      for (;;) {
        woken = false;
        const view = await this.client.getRound(wid);
        if (isFinished(view)) return view;
        if (view.status === "failed") throw new ToolroundError(200, "round_failed", view.error || "the round failed", view);
        let acted = false;
        for (const p of askedCalls(wid, view, calls)) {
          if (asked.has(p.call_id)) continue;
          asked.add(p.call_id);
          let d: unknown = this.onApproval ? await this.onApproval(p) : undefined;
          if ((d === null || d === undefined) && this.interrupts) d = graphInterrupt(p);
          if (d !== null && d !== undefined && !p.decision) {
            await this.decide(wid, p, decisionOf(d));
            acted = true;
          }
        }
        for (const p of view.pending ?? []) {
          const key = JSON.stringify([p.call_id, p.kind ?? "", p.wait_id ?? ""]);
          if (DECISION_KINDS.has(p.kind ?? "") || waited.has(key)) continue;
          waited.add(key);
          // The client's own handling of what is not a decision.
          await (this.client as unknown as { handle(w: string, p: PendingCall, o: { onWait?: OnWait }): Promise<void> }).handle(wid, p, {
            onWait: this.onWait,
          });
        }
        if (!acted && !woken) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, this.pollMs);
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          wake = undefined;
        }
      }
    } finally {
      stop.abort();
    }
  }

  private async decide(wid: string, p: InterruptValue, d: Decision): Promise<void> {
    try {
      if (d.approve) await this.client.approve(wid, p.call_id, p.approval_id, { ...d, waitId: p.wait_id });
      else await this.client.deny(wid, p.call_id, p.approval_id, d.reason, p.wait_id);
    } catch (e) {
      // Decided on the console meanwhile, or its deadline passed: the
      // round's result tells the rest.
      if (e instanceof ToolroundError && e.code === "not_waiting") return;
      throw e;
    }
  }
}

// --- the application's own tools ---------------------------------------------

function isLangChainTool(t: StructuredToolInterface | ToolSpecLike): t is StructuredToolInterface {
  return typeof (t as StructuredToolInterface).invoke === "function" && typeof t.name === "string";
}

/** The toolround/tools tools that serve LangChain tools in a tool worker:
 * the name, description and zod schema the tool has (its JSON Schema as
 * zod writes it); `effect` "read_only" for the names in `readOnly`, else
 * "side_effect". A call invokes the tool as ToolNode does, with the tool
 * call (`config.toolCall`, its id the round's call id) and a config whose
 * `configurable.toolround` is the call's toolround ToolContext
 * (`operationId`: a side effect's idempotency key) and whose `signal` is
 * aborted when the round cancels the call; the result is the ToolMessage's
 * content. Arguments LangChain refuses are `invalid_arguments`; what the
 * tool throws is the round's: a read-only call is retried, a side effect is
 * `unknown_outcome`; throw toolround/tools' ToolError for an error the
 * model should read. A tool's own problems (no zod 4 schema, a bad name)
 * are in its `problems`. */
export async function toolroundTools(tools: StructuredToolInterface[], serving: OwnToolsServing = {}): Promise<ToolsModule.Tool[]> {
  const tr: typeof ToolsModule = await import("../tools/index.js");
  const ro = new Set(serving.readOnly ?? []);
  return tools.map((t) =>
    tr.tool({
      name: t.name,
      description: t.description,
      effect: ro.has(t.name) ? "read_only" : "side_effect",
      ...(serving.toolOptions?.[t.name] ?? {}),
      parameters: t.schema as never,
      execute: async (args: unknown, ctx: ToolsModule.ToolContext) => {
        const call = { type: "tool_call" as const, id: ctx.callId, name: t.name, args: args as Record<string, unknown> };
        let out: unknown;
        try {
          out = await t.invoke(call, { configurable: { toolround: ctx }, signal: ctx.signal, runName: t.name });
        } catch (e) {
          if (e instanceof ToolInputParsingException) throw new tr.ToolError(`${t.name}: ${e.message}`, "invalid_arguments");
          throw e;
        }
        return resultOf(tr, ToolMessage.isInstance(out) ? out.content : out);
      },
    }),
  );
}

// A ToolMessage's content: text, or content blocks (text blocks as text
// items, the others as JSON).
function resultOf(tr: typeof ToolsModule, content: unknown): unknown {
  if (!Array.isArray(content) || !content.length || !content.every((b) => typeof b === "object" && b !== null && "type" in b)) return content;
  return content.map((b: { type: string; text?: unknown }) => (b.type === "text" && typeof b.text === "string" ? tr.text(b.text) : tr.json(b)));
}

/** Serves LangChain tools in a tool worker of this process until SIGINT,
 * SIGTERM or `options.signal` (toolround/tools' serve): for a tool worker
 * of its own, beside graphs whose RoundToolNode has `serve: false`. */
export async function serveTools(tools: StructuredToolInterface[], options: OwnToolsServing & ToolsModule.ServeOptions): Promise<void> {
  const { readOnly, toolOptions, ...serveOptions } = options;
  const tr: typeof ToolsModule = await import("../tools/index.js");
  await tr.serve(await toolroundTools(tools, { readOnly, toolOptions }), serveOptions);
}

/** The decision that `new Command({resume: value})` gives a waiting call:
 * true/false, "approve"/"deny", or a Decision (`{approve: true, reason,
 * args, ...}`); another field is refused with its name. */
export function decisionOf(value: unknown): Decision {
  if (typeof value === "boolean") return { approve: value };
  if (value === "approve" || value === "deny") return { approve: value === "approve" };
  if (value && typeof value === "object" && typeof (value as Decision).approve === "boolean") {
    const extra = Object.keys(value).filter((k) => !DECISION_FIELDS.includes(k));
    if (extra.length) throw new TypeError(`RoundToolNode: the resume value has unknown fields ${extra.join(", ")} (known: ${DECISION_FIELDS.join(", ")})`);
    return value as Decision;
  }
  throw new TypeError(`RoundToolNode: resume with true/false, "approve"/"deny" or {approve: boolean, ...}, not ${JSON.stringify(value)}`);
}

function finished(h: Run, n: number, res: RoundResult): void {
  h.number = n;
  h.state = res.state ?? null;
  h.last = res;
}

// The call ids of a round, finished or running, in call order.
function callIds(view: RoundResult | RunningRound): string[] {
  if (isFinished(view)) return (view.results ?? []).map((r) => r.call_id);
  return ((view.progress?.calls as CallProgress[] | undefined) ?? []).map((c) => c.call_id);
}

// The calls of a running round a person is or was asked about, in call
// order: the pending entry of one that waits for a decision, else what is
// known of one decided since (with its `decision`).
function askedCalls(wid: string, view: RunningRound, calls: Map<string, ToolCall>): InterruptValue[] {
  const pending = new Map<string, InterruptValue>();
  for (const p of view.pending ?? []) {
    if (DECISION_KINDS.has(p.kind ?? "")) pending.set(p.call_id, { ...p, workflow_id: wid });
  }
  const progress = view.progress?.calls as CallProgress[] | undefined;
  if (!progress?.length) return [...pending.values()];
  const out: InterruptValue[] = [];
  for (const c of progress) {
    const p = pending.get(c.call_id);
    if (p) out.push(p);
    else if (c.decision && ASKED.has(c.decision)) {
      out.push({
        workflow_id: wid,
        call_id: c.call_id,
        tool: c.tool ?? "",
        kind: "confirm",
        arguments: calls.get(c.call_id)?.function.arguments ?? "{}",
        decision: c.decision,
        by: c.by ?? "",
      } as InterruptValue);
    }
  }
  return out;
}
