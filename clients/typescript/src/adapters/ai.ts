// The Vercel AI SDK (npm `ai`) with toolround rounds: an app that calls
// generateText or streamText with these tools runs each step's tool calls
// as one durable round of the run sessionId/runId (SPEC X4).
//
//   import { roundTools } from "toolround/ai";
//   const rt = roundTools(client, "s1", "r1", specs, { onApproval: () => true });
//   const res = await generateText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(5), prompt });
//
// The run handle keeps the run state and the round number. The round's
// gate asks for approvals as any round's does: on the console, or through
// `onApproval`. A call whose status is not a success (`error`, `skipped`,
// `unknown`, ...) throws RoundCallError in its tool, so the SDK records a
// tool error whose text is the round's tool message.
//
// The application's own tools (SPEC Y6): `ownTools` takes the app's `tool()`s
// (a zod `inputSchema` and an `execute`), serves them in this process with a
// tool worker of toolround/tools on `taskQueue` (one the worker's
// TOOL_QUEUES names; the optional peer dependencies @temporalio/worker,
// @temporalio/client, @temporalio/activity and zod), and gives tools whose
// calls run through rounds that call them there:
//
//   const rt = await ownTools(client, "s1", "r1", { lookupOrder, refundOrder },
//     { taskQueue: "orders", readOnly: ["lookupOrder"] });
//   await generateText({ model: rt.wrap(model), tools: rt.tools, ... });
//   await rt.close(); // stops the tool worker
//
// `wrap(model)` (or `middleware`) tells the tools which calls a step holds
// as soon as the model's answer is complete, so a step's calls are one
// round also when streamText runs each tool as its call streams in. Tools
// used without it gather the calls that arrive within `windowMs`.
import { jsonSchema, tool, wrapLanguageModel, type LanguageModelMiddleware, type Tool } from "ai";

import type * as ToolsModule from "../tools/index.js";

import type { CallResult, ToolCall } from "../api-types.js";
import type { Client, OnApproval, OnWait, Run, RunOptions } from "../client.js";
import { functionOf, isError, openaiCall, outcomes, type CallOutcome, type ToolSpecLike } from "./common.js";
import { OwnToolWorker, waitListed, type OwnToolsServing, type OwnWorkerOptions } from "./worker.js";

export type { ToolSpecLike } from "./common.js";
export { OwnToolWorker, type OwnToolOptions, type OwnToolsServing, type OwnWorkerOptions } from "./worker.js";

/** The error a tool throws for a call the round did not run or that failed:
 * its message is the call's tool message, `result` its result entry. */
export class RoundCallError extends Error {
  readonly result: CallResult;
  constructor(content: string, result: CallResult) {
    super(content || `${result.tool}: ${result.status}`);
    this.name = "RoundCallError";
    this.result = result;
  }
}

export interface RoundToolsOptions extends RunOptions {
  onApproval?: OnApproval;
  onWait?: OnWait;
  /** Without the middleware: how long to wait for more calls of a step (ms, default 50). */
  windowMs?: number;
}

type WrappableModel = Parameters<typeof wrapLanguageModel>[0]["model"];

interface ModelCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerExecuted?: boolean;
}

/** One step's calls, run as one round when the first of them executes. */
class Batch {
  readonly calls: ToolCall[] = [];
  private started: Promise<Map<string, CallOutcome>> | undefined;
  constructor(private readonly owner: RoundTools) {}
  add(c: ToolCall): void {
    if (this.started) throw new Error("a call joined a round that already started");
    if (!this.calls.some((x) => x.id === c.id)) this.calls.push(c);
  }
  start(): Promise<Map<string, CallOutcome>> {
    this.started ??= this.owner.runBatch(this.calls);
    return this.started;
  }
}

export class RoundTools {
  /** The run handle: its `number` is the last finished round, `state` the run state. */
  readonly run: Run;
  /** The SDK tools, one per spec: pass them as `tools`. */
  readonly tools: Record<string, Tool>;
  /** A language model middleware that marks each step's calls. */
  readonly middleware: LanguageModelMiddleware;
  private readonly names: Set<string>;
  private readonly onApproval?: OnApproval;
  private readonly onWait?: OnWait;
  private readonly windowMs: number;
  private readonly announced = new Map<string, Batch>();
  private gathering: { batch: Batch; timer: ReturnType<typeof setTimeout>; go: Promise<void>; release: () => void } | undefined;

  /** The tool worker this process runs for the app's own tools, if any. */
  worker: OwnToolWorker | undefined;

  constructor(client: Client, sessionId: string, runId: string, specs: ToolSpecLike[], options: RoundToolsOptions = {}, own: Record<string, Tool> = {}) {
    const { onApproval, onWait, windowMs, ...runOptions } = options;
    this.run = client.run(sessionId, runId, runOptions);
    this.onApproval = onApproval;
    this.onWait = onWait;
    this.windowMs = windowMs ?? 50;
    this.tools = {};
    this.names = new Set();
    for (const [name, t] of Object.entries(own)) {
      this.names.add(name);
      // The SDK checks the input as for the tool itself; the round asks
      // (its gate) and runs it on its tool worker.
      this.tools[name] = tool({
        description: t.description,
        inputSchema: t.inputSchema,
        execute: (input: unknown, { toolCallId }: { toolCallId: string }) => this.execute(toolCallId, name, input),
      } as Tool);
    }
    for (const spec of specs) {
      const fn = functionOf(spec);
      this.names.add(fn.name);
      this.tools[fn.name] = tool({
        description: fn.description,
        inputSchema: jsonSchema<Record<string, unknown>>(fn.parameters as Parameters<typeof jsonSchema>[0]),
        execute: (input: Record<string, unknown>, { toolCallId }: { toolCallId: string }) => this.execute(toolCallId, fn.name, input),
      });
    }
    const announce = (calls: ModelCall[]) => this.announce(calls);
    const ours = (c: ModelCall) => this.names.has(c.toolName) && !c.providerExecuted;
    this.middleware = {
      specificationVersion: "v3",
      wrapGenerate: async ({ doGenerate }) => {
        const r = await doGenerate();
        announce((r.content as unknown as (ModelCall & { type: string })[]).filter((p) => p.type === "tool-call" && ours(p)));
        return r;
      },
      wrapStream: async ({ doStream }) => {
        const r = await doStream();
        type Part = (typeof r.stream extends ReadableStream<infer P> ? P : never) & Partial<ModelCall>;
        let held: Part[] = [];
        const release = (ctl: TransformStreamDefaultController<Part>) => {
          announce(held as unknown as ModelCall[]);
          for (const p of held) ctl.enqueue(p);
          held = [];
        };
        // The step's calls are held back until the model's answer ends, so
        // that the round knows all of them before the first one runs.
        const stream = r.stream.pipeThrough(
          new TransformStream<Part, Part>({
            transform(part, ctl) {
              if (part.type === "tool-call" && ours(part as unknown as ModelCall)) {
                held.push(part);
                return;
              }
              if (part.type === "finish") release(ctl);
              ctl.enqueue(part);
            },
            flush(ctl) {
              if (held.length) release(ctl);
            },
          }),
        );
        return { ...r, stream };
      },
    };
  }

  /** The model with the middleware: pass it as `model`. */
  wrap<M extends WrappableModel>(model: M): ReturnType<typeof wrapLanguageModel> {
    return wrapLanguageModel({ model, middleware: this.middleware });
  }

  private announce(calls: ModelCall[]): void {
    if (!calls.length) return;
    const batch = new Batch(this);
    for (const c of calls) {
      batch.add(openaiCall(c.toolCallId, c.toolName, c.input));
      this.announced.set(c.toolCallId, batch);
    }
  }

  private async execute(toolCallId: string, name: string, input: unknown): Promise<string> {
    let batch = this.announced.get(toolCallId);
    if (batch) {
      this.announced.delete(toolCallId);
    } else {
      batch = await this.gather(openaiCall(toolCallId, name, input));
    }
    const got = (await batch.start()).get(toolCallId);
    if (!got) throw new Error(`the round of ${this.run.sessionId}/${this.run.runId} has no result for call ${toolCallId}`);
    if (isError(got.result)) throw new RoundCallError(got.content, got.result);
    return got.content;
  }

  // Without the middleware: the calls that arrive until none has come for
  // windowMs are one round.
  private async gather(c: ToolCall): Promise<Batch> {
    if (!this.gathering) {
      let release!: () => void;
      const go = new Promise<void>((r) => (release = r));
      this.gathering = { batch: new Batch(this), timer: setTimeout(() => {}, 0), go, release };
    }
    const g = this.gathering;
    g.batch.add(c);
    clearTimeout(g.timer);
    g.timer = setTimeout(() => {
      if (this.gathering === g) this.gathering = undefined;
      g.release();
    }, this.windowMs);
    await g.go;
    return g.batch;
  }

  /** Stops the tool worker of the app's own tools (calls in flight get 10 seconds). */
  async close(): Promise<void> {
    await this.worker?.close();
  }

  /** @internal Runs a step's calls as the run's next round. */
  async runBatch(calls: ToolCall[]): Promise<Map<string, CallOutcome>> {
    const res = await this.run.round(calls, { onApproval: this.onApproval, onWait: this.onWait });
    return outcomes(res);
  }
}

/** The SDK tools for toolround tools (`specs`: chat-completions tool specs,
 * as `starter tools --provider P` prints them, or bare `{name,
 * description, parameters}`), whose calls run through rounds of the run
 * sessionId/runId; `options` are the run handle's (`provider`, `state`,
 * ...) and `onApproval`/`onWait`. */
export function roundTools(client: Client, sessionId: string, runId: string, specs: ToolSpecLike[], options: RoundToolsOptions = {}): RoundTools {
  return new RoundTools(client, sessionId, runId, specs, options);
}

// --- the application's own tools ---------------------------------------------

/** The toolround/tools tools that serve the app's AI SDK tools in a tool
 * worker: the name is the key, the description and the zod `inputSchema`
 * the tool's own (its JSON Schema as zod writes it); `effect` "read_only"
 * for the names in `readOnly`, else "side_effect". `execute` gets the
 * arguments as zod parsed them and `{toolCallId, messages: [], abortSignal,
 * experimental_context}`, where `abortSignal` is aborted when the round
 * cancels the call and `experimental_context` is the call's toolround
 * ToolContext (`operationId`: a side effect's idempotency key). What it
 * throws is the round's: a read-only call is retried, a side effect is
 * `unknown_outcome`; throw toolround/tools' ToolError for an error the model
 * should read. A tool's own problems (no zod schema, a bad name) are in its
 * `problems`. */
export async function toolroundTools(tools: Record<string, Tool>, serving: OwnToolsServing = {}): Promise<ToolsModule.Tool[]> {
  const tr: typeof ToolsModule = await import("../tools/index.js");
  const ro = new Set(serving.readOnly ?? []);
  return Object.entries(tools).map(([name, t]) => {
    const run = t.execute;
    return tr.tool({
      name,
      description: t.description,
      effect: ro.has(name) ? "read_only" : "side_effect",
      ...(serving.toolOptions?.[name] ?? {}),
      parameters: t.inputSchema as never,
      execute: async (args: unknown, ctx: ToolsModule.ToolContext) => {
        if (typeof run !== "function") throw new tr.ToolError(`${name} has no execute function`, "no_execute");
        const out: unknown = await run(args as never, { toolCallId: ctx.callId, messages: [], abortSignal: ctx.signal, experimental_context: ctx });
        return lastOf(out);
      },
    });
  });
}

// A tool's execute may stream preliminary results: the last is the result.
async function lastOf(out: unknown): Promise<unknown> {
  if (out === null || typeof out !== "object" || typeof (out as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") return out;
  let last: unknown;
  for await (const v of out as AsyncIterable<unknown>) last = v;
  return last;
}

/** Serves the app's AI SDK tools in a tool worker of this process until
 * SIGINT, SIGTERM or `options.signal` (toolround/tools' serve): for a
 * tool worker of its own, beside apps that use `ownTools` with `serve: false`. */
export async function serveTools(tools: Record<string, Tool>, options: OwnToolsServing & ToolsModule.ServeOptions): Promise<void> {
  const { readOnly, toolOptions, ...serveOptions } = options;
  const tr: typeof ToolsModule = await import("../tools/index.js");
  await tr.serve(await toolroundTools(tools, { readOnly, toolOptions }), serveOptions);
}

export interface OwnToolsOptions extends RoundToolsOptions, OwnToolsServing {
  /** The tool worker's task queue: one that the worker's TOOL_QUEUES names. */
  taskQueue: string;
  /** toolround tools (chat-completions specs) the rounds also run. */
  specs?: ToolSpecLike[];
  /** Serve the tools in this process (true, the default), or leave it to a
   * tool worker of yours (`serveTools`). */
  serve?: boolean;
  /** The in-process tool worker's options (address, toolroundTaskQueue, ...). */
  worker?: OwnWorkerOptions;
  /** How long to wait for the worker to list the tools (60 000 ms). */
  readyTimeoutMs?: number;
}

/** The SDK tools for the app's own `tool()`s (and `specs`), whose calls run
 * through rounds of the run sessionId/runId, the calls of one step as one
 * round. With `serve` (the default) a tool worker in this process serves the
 * tools on `taskQueue`, and this resolves once the toolround worker lists
 * them as served. The rounds' provider is "claude-code" unless `provider`
 * says otherwise (the SDK gives the model every schema itself), and the run
 * state starts with every tool's schema as fetched. */
export async function ownTools(client: Client, sessionId: string, runId: string, tools: Record<string, Tool>, options: OwnToolsOptions): Promise<RoundTools> {
  const { taskQueue, specs = [], serve = true, worker, readyTimeoutMs = 60_000, readOnly, toolOptions, ...roundOptions } = options;
  if (!taskQueue) throw new TypeError("ownTools: a taskQueue is needed (one that the worker's TOOL_QUEUES names)");
  for (const [name, t] of Object.entries(tools)) {
    // The middleware puts a step's calls in its round before the SDK would
    // ask, so the SDK's approval could not hold a call back: the round's
    // gate asks instead (onApproval, or the console).
    if (t.needsApproval !== undefined && t.needsApproval !== false) {
      throw new TypeError(`ownTools: tool ${name} has needsApproval; the round's gate asks for approvals (onApproval, or the console)`);
    }
  }
  const served = await toolroundTools(tools, { readOnly, toolOptions });
  const names = [...Object.keys(tools), ...specs.map((sp) => functionOf(sp).name)];
  const state = (roundOptions.state ?? {}) as { fetched?: string[] };
  roundOptions.state = { ...state, fetched: [...new Set([...(state.fetched ?? []), ...names])].sort() } as never;
  roundOptions.provider ??= "claude-code";
  const rt = new RoundTools(client, sessionId, runId, specs, roundOptions, tools);
  if (!serve) return rt;
  const tr: typeof ToolsModule = await import("../tools/index.js");
  rt.worker = new OwnToolWorker(served, taskQueue, tr.serve, worker);
  try {
    await rt.worker.started();
    await waitListed(client, rt.run.defaults.provider ?? "claude-code", taskQueue, Object.keys(tools), readyTimeoutMs);
  } catch (e) {
    await rt.worker.close();
    throw e;
  }
  return rt;
}
