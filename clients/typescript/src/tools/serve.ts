// Serving tools (SPEC Y1, Y2): announce them to toolround's catalog of the
// task queue by update-with-start, then run them as Temporal activities on
// that queue until the signal given aborts or the process gets SIGINT or
// SIGTERM (the Temporal runtime's own handlers).
import { hostname } from "node:os";

import { ApplicationFailure, CancelledFailure, Context } from "@temporalio/activity";
import { Client, Connection, WithStartWorkflowOperation, WorkflowUpdateFailedError } from "@temporalio/client";
import { NativeConnection, Worker } from "@temporalio/worker";

import { FAILURE_SEALED, openCall, seal } from "./secrets.js";
import { BadEnvelope, call, failureOf, problemsOf, reconcile, type CallResult, type Declaration, type ReconcileResult, type Tool } from "./core.js";

export const CATALOG_WORKFLOW = "UserToolCatalog";
export const ANNOUNCE_UPDATE = "announce";
/** Calls running at once in one tool worker. */
export const MAX_CALLS = 100;

/** serve would not serve: a tool has a problem, or the catalog refused a
 * tool or the announce, or did not answer. `lines` has one line for each,
 * printed already. */
export class ServeRefused extends Error {
  readonly lines: string[];
  constructor(lines: string[]) {
    super(lines.join("\n"));
    this.name = "ServeRefused";
    this.lines = lines;
  }
}

export interface ServeOptions {
  /** The tool worker's own task queue. */
  taskQueue: string;
  /** Temporal's address: TEMPORAL_ADDRESS, else 127.0.0.1:7233. */
  address?: string;
  /** TEMPORAL_NAMESPACE, else "default". */
  namespace?: string;
  /** toolround's worker's task queue, where the catalog runs:
   * TOOLROUND_TASK_QUEUE, else "toolround". */
  toolroundTaskQueue?: string;
  /** Aborting it stops the worker gracefully; serve then resolves. */
  signal?: AbortSignal;
  /** The identity the announce and the worker give (pid@host). */
  identity?: string;
  /** How long to wait for the catalog's answer (60 000 ms). */
  announceTimeoutMs?: number;
  /** On a refusal, after printing its lines: exit the process with status 2
   * (true, the default), or reject with ServeRefused (false). */
  exitOnRefusal?: boolean;
  /** Where the refusal lines go: stderr by default. */
  log?: (line: string) => void;
  /** Called once the catalog accepted the tools, as the worker starts polling. */
  onReady?: () => void;
}

export function catalogWorkflowId(taskQueue: string): string {
  return "usertools/" + taskQueue;
}

export interface Announcement {
  v: 1;
  queue: string;
  worker: string;
  tools: Declaration[];
}

export function announcement(tools: readonly Tool[], taskQueue: string, worker: string): Announcement {
  return { v: 1, queue: taskQueue, worker, tools: tools.map((t) => t.announcement()) };
}

/** The interval of a call's heartbeats: a third of the tool's heartbeat, or
 * of the activity's heartbeat timeout when that is shorter. */
function intervalMs(t: Tool, declaredMs: number | undefined): number {
  let ms = (t.heartbeat * 1000) / 3;
  if (declaredMs && declaredMs > 0) ms = Math.min(ms, declaredMs / 3);
  return ms;
}

/** The activity failure for what a function threw: an ApplicationFailure
 * whose type is its class's name (retryable), BadEnvelope's non-retryable,
 * or, once the call is cancelled, a CancelledFailure. */
export function activityFailure(e: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason instanceof CancelledFailure ? signal.reason : new CancelledFailure("CANCELLED");
  if (e instanceof BadEnvelope) return ApplicationFailure.create({ type: "BadEnvelope", message: e.message, nonRetryable: true });
  if (e instanceof ApplicationFailure || e instanceof CancelledFailure) return e;
  const f = failureOf(e);
  return ApplicationFailure.create({ type: f.type, message: f.message, nonRetryable: false, cause: e instanceof Error ? e : undefined });
}

/** Temporal retries an activity with the round's envelope as it was: the
 * function's ctx.attempt is the attempt running. */
function withAttempt(envelope: unknown, attempt: number): unknown {
  if (typeof envelope !== "object" || envelope === null || Array.isArray(envelope)) return envelope;
  return { ...envelope, attempt };
}

/** The activities of the tools: toolround.tool.<name> for each, and
 * toolround.reconcile.<name> for each that declares reconcile. */
export function activities(tools: readonly Tool[]): Record<string, (envelope: unknown) => Promise<unknown>> {
  const out: Record<string, (envelope: unknown) => Promise<unknown>> = {};
  for (const t of tools) {
    out[`toolround.tool.${t.name}`] = async (envelope: unknown): Promise<CallResult> => {
      const ctx = Context.current();
      if (sendsSecrets(envelope)) return sealedCall(t, envelope, ctx);
      try {
        const res = await call(t, withAttempt(envelope, ctx.info.attempt), {
          heartbeat: () => ctx.heartbeat(),
          intervalMs: intervalMs(t, ctx.info.heartbeatTimeoutMs),
          signal: ctx.cancellationSignal,
        });
        return { ...res, attempt: ctx.info.attempt };
      } catch (e) {
        throw activityFailure(e, ctx.cancellationSignal);
      }
    };
    if (t.reconcile) {
      out[`toolround.reconcile.${t.name}`] = async (envelope: unknown): Promise<ReconcileResult> => {
        const ctx = Context.current();
        if (sendsSecrets(envelope)) return sealedReconcile(t, envelope, ctx);
        try {
          return await reconcile(t, withAttempt(envelope, ctx.info.attempt), {
            heartbeat: () => ctx.heartbeat(),
            intervalMs: intervalMs(t, ctx.info.heartbeatTimeoutMs),
            signal: ctx.cancellationSignal,
          });
        } catch (e) {
          throw activityFailure(e, ctx.cancellationSignal);
        }
      };
    }
  }
  return out;
}

function sendsSecrets(envelope: unknown): envelope is Record<string, unknown> {
  if (typeof envelope !== "object" || envelope === null || Array.isArray(envelope)) return false;
  const s = (envelope as Record<string, unknown>).secrets;
  return typeof s === "object" && s !== null && Object.keys(s).length > 0;
}

/** A call that sends secrets (Y3, T9): open them with the queue's key, run
 * the function with their values in its arguments, and seal what it
 * answers (the result, or a failure's message, without its cause) with the
 * same key; toolround opens it and redacts the values before it keeps it. */
async function sealedCall(t: Tool, envelope: Record<string, unknown>, ctx: Context): Promise<CallResult> {
  let opened: { key: Buffer; envelope: Record<string, unknown> };
  try {
    opened = openCall(envelope, ctx.info.taskQueue);
  } catch (e) {
    const why = `the call sends secrets, and this tool worker cannot open them, so it did not run: ${messageOf(e)}`;
    return { v: 1, content: [{ type: "text", text: why }], is_error: true, error_code: "secrets_unavailable" };
  }
  let res: CallResult;
  try {
    res = await call(t, withAttempt(opened.envelope, ctx.info.attempt), {
      heartbeat: () => ctx.heartbeat(),
      intervalMs: intervalMs(t, ctx.info.heartbeatTimeoutMs),
      signal: ctx.cancellationSignal,
    });
  } catch (e) {
    const f = activityFailure(e, ctx.cancellationSignal);
    if (!(f instanceof ApplicationFailure)) throw f;
    throw ApplicationFailure.create({ type: FAILURE_SEALED, message: seal(opened.key, f.message || f.type || "failed"), nonRetryable: f.nonRetryable ?? false });
  }
  const whole = { ...res, attempt: ctx.info.attempt };
  return { v: 1, content: [], is_error: false, attempt: ctx.info.attempt, sealed: seal(opened.key, JSON.stringify(whole)) };
}

/** A reconcile of a call that sent secrets answers whether it took effect,
 * without content, which might hold a value. */
async function sealedReconcile(t: Tool, envelope: Record<string, unknown>, ctx: Context): Promise<ReconcileResult> {
  try {
    const opened = openCall(envelope, ctx.info.taskQueue);
    const res = await reconcile(t, withAttempt(opened.envelope, ctx.info.attempt), {
      heartbeat: () => ctx.heartbeat(),
      intervalMs: intervalMs(t, ctx.info.heartbeatTimeoutMs),
      signal: ctx.cancellationSignal,
    });
    return { v: 1, took_effect: res.took_effect, content: [] };
  } catch (e) {
    if (ctx.cancellationSignal.aborted) throw activityFailure(e, ctx.cancellationSignal);
    return { v: 1, took_effect: null, content: [] };
  }
}

function say(o: ServeOptions, line: string): void {
  const l = `toolround/tools: ${line}`;
  if (o.log) o.log(l);
  else process.stderr.write(l + "\n");
}

function refuse(o: ServeOptions, lines: string[]): never {
  for (const l of lines) say(o, l);
  if (o.exitOnRefusal ?? true) process.exit(2);
  throw new ServeRefused(lines);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Announces the tools on the catalog usertools/<taskQueue> and serves them
 * on taskQueue until `signal` aborts or the process gets SIGINT or SIGTERM;
 * resolves once the worker has stopped (calls in flight get 10 seconds).
 * A problem of a tool, a refused tool, a rejected or unanswered announce is
 * one line each on stderr and exit status 2 (or ServeRefused with
 * exitOnRefusal: false). */
export async function serve(tools: readonly Tool[], o: ServeOptions): Promise<void> {
  const list = [...new Set(tools)];
  const lines = problemsOf(list);
  if (!o.taskQueue) lines.push("the task queue is empty");
  if (!list.length) lines.push("no tools to serve");
  if (lines.length) refuse(o, lines);
  const address = o.address || process.env.TEMPORAL_ADDRESS || "127.0.0.1:7233";
  const namespace = o.namespace || process.env.TEMPORAL_NAMESPACE || "default";
  const toolroundQueue = o.toolroundTaskQueue || process.env.TOOLROUND_TASK_QUEUE || "toolround";
  const identity = o.identity || `${process.pid}@${hostname()}`;
  if (o.signal?.aborted) return;

  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection, namespace, identity });
    const start = new WithStartWorkflowOperation(CATALOG_WORKFLOW, {
      workflowId: catalogWorkflowId(o.taskQueue),
      taskQueue: toolroundQueue,
      workflowIdConflictPolicy: "USE_EXISTING",
      args: [{ queue: o.taskQueue, tools: [], announcements: 0 }],
    });
    const timeout = o.announceTimeoutMs ?? 60_000;
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), timeout);
    let answer: { accepted?: string[]; refused?: { name: string; reason: string }[] } | undefined;
    try {
      answer = await connection.withAbortSignal(stop.signal, () =>
        client.workflow.executeUpdateWithStart(ANNOUNCE_UPDATE, {
          args: [announcement(list, o.taskQueue, identity)],
          startWorkflowOperation: start,
        }),
      );
    } catch (e) {
      if (stop.signal.aborted) {
        refuse(o, [
          `no answer to the announce within ${timeout / 1000}s: is a toolround worker polling task queue ${JSON.stringify(toolroundQueue)} of namespace ${JSON.stringify(namespace)}?`,
        ]);
      }
      if (e instanceof WorkflowUpdateFailedError) {
        refuse(o, [`the catalog ${catalogWorkflowId(o.taskQueue)} refused the announce: ${messageOf(e.cause ?? e)}`]);
      }
      throw e;
    } finally {
      clearTimeout(timer);
      start.workflowHandle().catch(() => undefined);
    }
    const refused = answer?.refused ?? [];
    if (refused.length) refuse(o, refused.map((r) => `tool ${r.name} refused: ${r.reason}`));
  } finally {
    await connection.close();
  }

  const interval = Math.min(...list.map((t) => t.heartbeat)) / 3;
  const workerConnection = await NativeConnection.connect({ address });
  try {
    const worker = await Worker.create({
      connection: workerConnection,
      namespace,
      taskQueue: o.taskQueue,
      activities: activities(list),
      identity,
      maxConcurrentActivityTaskExecutions: MAX_CALLS,
      maxHeartbeatThrottleInterval: `${interval}s`,
      defaultHeartbeatThrottleInterval: `${interval}s`,
      shutdownGraceTime: "10s",
    });
    const onAbort = () => {
      if (worker.getState() === "RUNNING") worker.shutdown();
    };
    o.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (o.signal?.aborted) return;
      const running = worker.run();
      o.onReady?.();
      await running;
    } finally {
      o.signal?.removeEventListener("abort", onAbort);
    }
  } finally {
    await workerConnection.close();
  }
}
