// The tool worker an adapter starts in the application's process for the
// application's own tools (SPEC Y6), and the wait until the toolround
// worker lists them.
import type * as ToolsModule from "../tools/index.js";

import type { Client } from "../client.js";

/** How a tool worker serves one of the app's own tools: toolround/tools'
 * options (times in whole seconds). */
export interface OwnToolOptions {
  concurrent?: boolean;
  cacheSeconds?: number;
  subject?: string;
  timeout?: number;
  scheduleToStart?: number;
  heartbeat?: number;
}

export interface OwnToolsServing {
  /** The names of the read-only tools; the others are side effects. */
  readOnly?: string[];
  /** Per tool name, the tool worker's options for it. */
  toolOptions?: Record<string, OwnToolOptions>;
}

/** What an adapter's tool worker takes: toolround/tools'
 * serve options but the task queue. */
export type OwnWorkerOptions = Omit<ToolsModule.ServeOptions, "taskQueue" | "signal" | "onReady">;

/** A tool worker running in this process. */
export class OwnToolWorker {
  private readonly stop = new AbortController();
  /** Resolves once the worker has stopped. */
  readonly done: Promise<void>;
  private readonly ready: Promise<void>;

  constructor(tools: ToolsModule.Tool[], taskQueue: string, serve: typeof ToolsModule.serve, options: OwnWorkerOptions = {}) {
    let onReady!: () => void;
    this.ready = new Promise<void>((r) => (onReady = r));
    this.done = serve(tools, { exitOnRefusal: false, ...options, taskQueue, signal: this.stop.signal, onReady });
    this.done.catch(() => undefined);
  }

  /** Resolves once the catalog accepted the tools; rejects with what kept
   * the worker from serving (ServeRefused, its lines printed). */
  async started(): Promise<void> {
    await Promise.race([this.ready, this.done.then(() => Promise.reject(new Error("the tool worker stopped before it served")))]);
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.done.catch(() => undefined);
  }
}

/** Until the toolround worker lists the queue's tools as served by a live
 * tool worker (it reads the catalogs every two seconds). */
export async function waitListed(client: Client, provider: string, queue: string, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen: unknown;
  for (;;) {
    try {
      const listed = await client.tools({ provider, worker: true });
      const q = (listed.queues ?? []).find((x) => x.queue === queue);
      seen = q;
      if (q?.available && names.every((n) => (q.tools ?? []).includes(n))) return;
    } catch (e) {
      seen = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`the toolround worker did not list ${names.join(", ")} on queue ${queue} within ${timeoutMs / 1000}s (is the queue in its TOOL_QUEUES?): ${JSON.stringify(seen)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
