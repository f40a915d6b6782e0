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
// `wrap(model)` (or `middleware`) tells the tools which calls a step holds
// as soon as the model's answer is complete, so a step's calls are one
// round also when streamText runs each tool as its call streams in. Tools
// used without it gather the calls that arrive within `windowMs`.
import { jsonSchema, tool, wrapLanguageModel, type LanguageModelMiddleware, type Tool } from "ai";

import type { CallResult, ToolCall } from "../api-types.js";
import type { Client, OnApproval, OnWait, Run, RunOptions } from "../client.js";
import { functionOf, isError, openaiCall, outcomes, type CallOutcome, type ToolSpecLike } from "./common.js";

export type { ToolSpecLike } from "./common.js";

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

  constructor(client: Client, sessionId: string, runId: string, specs: ToolSpecLike[], options: RoundToolsOptions = {}) {
    const { onApproval, onWait, windowMs, ...runOptions } = options;
    this.run = client.run(sessionId, runId, runOptions);
    this.onApproval = onApproval;
    this.onWait = onWait;
    this.windowMs = windowMs ?? 50;
    this.tools = {};
    this.names = new Set();
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
