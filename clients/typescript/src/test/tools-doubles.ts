// Workflow test doubles for tools-live.test.ts, bundled by @temporalio/worker:
// toolround's catalog of a queue, and a round's pass 2 calling one tool.
import * as wf from "@temporalio/workflow";

const BUILTINS = new Set(["calculate", "read_files", "edit_file", "run_command"]);

interface Announce {
  v?: unknown;
  queue?: unknown;
  tools: { name: string }[];
}

export const announceUpdate = wf.defineUpdate<{ accepted: string[]; refused: { name: string; reason: string }[] }, [Announce]>("announce");
export const announcedQuery = wf.defineQuery<Announce[]>("announced");
export const cancelSignal = wf.defineSignal("cancel");

/** A test double of toolround's catalog: records each announce, refuses
 * the built-ins' names, and its validator rejects a queue named
 * "rejected-*" as the real one rejects a malformed announce. */
export async function UserToolCatalog(_start?: unknown): Promise<void> {
  const announced: Announce[] = [];
  wf.setHandler(
    announceUpdate,
    (a) => {
      announced.push(a);
      const names = a.tools.map((t) => t.name);
      return {
        accepted: names.filter((n) => !BUILTINS.has(n)),
        refused: names.filter((n) => BUILTINS.has(n)).map((name) => ({ name, reason: "a built-in tool has that name" })),
      };
    },
    {
      validator: (a) => {
        if (a?.v !== 1 || String(a?.queue).startsWith("rejected-")) throw new Error(`malformed announce: queue ${JSON.stringify(a?.queue)}`);
      },
    },
  );
  wf.setHandler(announcedQuery, () => announced);
  await wf.condition(() => false);
}

export interface CallRequest {
  kind?: string;
  tool: string;
  queue: string;
  envelope: unknown;
  heartbeatTimeout?: number;
}

/** A test double of a round's pass 2: one activity <kind>.<tool> on the
 * tool worker's queue, one attempt; the signal "cancel" cancels it. */
export async function CallUserTool(req: CallRequest): Promise<unknown> {
  const acts = wf.proxyActivities<Record<string, (e: unknown) => Promise<unknown>>>({
    taskQueue: req.queue,
    startToCloseTimeout: "60s",
    heartbeatTimeout: `${req.heartbeatTimeout ?? 20}s`,
    retry: { maximumAttempts: 1 },
    cancellationType: wf.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const scope = new wf.CancellationScope();
  const running = scope.run(() => acts[`${req.kind ?? "toolround.tool"}.${req.tool}`](req.envelope));
  wf.setHandler(cancelSignal, () => scope.cancel());
  try {
    return { result: await running };
  } catch (e) {
    if (wf.isCancellation(e)) return { cancelled: true };
    if (e instanceof wf.ActivityFailure && e.cause instanceof wf.ApplicationFailure) {
      return { failure: { type: e.cause.type, message: e.cause.message, nonRetryable: e.cause.nonRetryable } };
    }
    throw e;
  }
}
