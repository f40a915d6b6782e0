// toolround/tools against the real Temporal dev server (TEMPORAL_ADDRESS,
// else 127.0.0.1:7233), with test doubles of toolround's catalog and of a
// round that calls a tool (tools-doubles.ts). Without a reachable server
// these skip; under CI=true they fail instead.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Client, Connection, type WorkflowHandle } from "@temporalio/client";
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode, type WorkflowBundle } from "@temporalio/worker";
import { z } from "zod";

import { ServeRefused, ToolError, serve, tool, type ServeOptions, type Tool } from "../tools/index.js";

const ADDRESS = process.env.TEMPORAL_ADDRESS || "127.0.0.1:7233";
const CI = process.env.CI === "true";

// The SDK logs each failed activity as a warning; the tests make them on purpose.
Runtime.install({ logger: new DefaultLogger("ERROR") });

// Connected before the tests are declared, so that they skip (or, under
// CI=true, fail) when the server is not there.
let client: Client | undefined;
let unreachable = "";
try {
  const connection = await Connection.connect({ address: ADDRESS, connectTimeout: "5s" });
  await connection.ensureConnected();
  client = new Client({ connection });
} catch (e) {
  unreachable = `the Temporal server at ${ADDRESS} is not reachable (${(e as Error).message})`;
}
const skip = () => (client || CI ? false : unreachable);

let bundle: WorkflowBundle | undefined;
before(async () => {
  if (!client) return;
  bundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL("./tools-doubles.js", import.meta.url)),
    logger: new DefaultLogger("WARN"),
  });
});

after(async () => {
  await client?.connection.close();
});

function envelope(t: Tool, args: unknown = {}, o: { schemaHash?: string; operationId?: string } = {}) {
  return {
    v: 1,
    tool: t.name,
    args_json: JSON.stringify(args),
    operation_id: o.operationId ?? "",
    call_id: "c1",
    workflow_id: "round/s1/r1/1",
    schema_hash: o.schemaHash ?? t.schemaHash,
    attempt: 1,
  };
}

/** One test's fake toolround queue with the doubles on it, and a unique
 * tool queue. */
class Live {
  readonly tag = randomUUID().slice(0, 10);
  readonly toolroundQueue = `test-toolround-${this.tag}`;
  readonly queue = `test-tools-${this.tag}`;
  readonly lines: string[] = [];
  readonly started: WorkflowHandle[] = [];
  private readonly stops: [AbortController, Promise<void>][] = [];
  constructor(readonly client: Client) {}

  /** serve(tools) until the test ends; the promise of serve. */
  serve(tools: Tool[], o: Partial<ServeOptions> = {}): Promise<void> {
    const ac = new AbortController();
    const p = serve(tools, {
      taskQueue: this.queue,
      address: ADDRESS,
      toolroundTaskQueue: this.toolroundQueue,
      signal: ac.signal,
      exitOnRefusal: false,
      log: (l) => this.lines.push(l),
      ...o,
    });
    p.catch(() => undefined);
    this.stops.push([ac, p]);
    return p;
  }

  async announced(queue = this.queue): Promise<{ v: number; queue: string; worker: string; tools: unknown[] }[]> {
    return this.client.workflow.getHandle(`usertools/${queue}`).query("announced");
  }

  async call(t: Tool, req: Record<string, unknown> = {}): Promise<WorkflowHandle> {
    const h = await this.client.workflow.start("CallUserTool", {
      args: [{ tool: t.name, queue: this.queue, envelope: envelope(t, req.args ?? {}), ...req }],
      taskQueue: this.toolroundQueue,
      workflowId: `test-call-${randomUUID().slice(0, 10)}`,
      workflowExecutionTimeout: "90s",
    });
    this.started.push(h);
    return h;
  }

  async stop(): Promise<void> {
    for (const [ac, p] of this.stops) {
      ac.abort();
      await p.catch(() => undefined);
    }
    for (const id of [`usertools/${this.queue}`, `usertools/rejected-${this.queue}`]) {
      await this.client.workflow.getHandle(id).terminate("test over").catch(() => undefined);
    }
    for (const h of this.started) await h.terminate("test over").catch(() => undefined);
  }
}

/** Runs body with the doubles' worker polling the test's toolround queue. */
async function live(body: (lv: Live) => Promise<void>): Promise<void> {
  if (!client || !bundle) throw new Error(unreachable || "the test doubles' workflows were not bundled");
  const lv = new Live(client);
  const connection = await NativeConnection.connect({ address: ADDRESS });
  const worker = await Worker.create({ connection, taskQueue: lv.toolroundQueue, workflowBundle: bundle });
  try {
    await worker.runUntil(async () => {
      try {
        await body(lv);
      } finally {
        await lv.stop();
      }
    });
  } finally {
    await connection.close();
  }
}

test("serve announces the tools and runs a call; the result says its attempt", { skip: skip() }, async () => {
  const weather = tool({
    name: "weather",
    effect: "read_only",
    subject: "city",
    description: "The weather in a city.",
    parameters: z.object({ city: z.string() }),
    execute: ({ city }, ctx) => ({ city, sky: "clear", attempt: ctx.attempt }),
  });
  await live(async (lv) => {
    const served = lv.serve([weather]);
    const out = await (await lv.call(weather, { args: { city: "Nantes" } })).result();
    assert.deepEqual(out, { result: { v: 1, is_error: false, content: [{ type: "json", json: { city: "Nantes", sky: "clear", attempt: 1 } }], attempt: 1 } });
    const [a] = await lv.announced();
    assert.equal(a.v, 1);
    assert.equal(a.queue, lv.queue);
    assert.match(a.worker, /^\d+@/);
    assert.deepEqual(a.tools, [weather.announcement()]);
    const changed = await (await lv.call(weather, { envelope: envelope(weather, { city: "x" }, { schemaHash: "sha256:0" }) })).result();
    assert.equal((changed as { result: { error_code: string } }).result.error_code, "schema_changed");
    const invalid = await (await lv.call(weather, { args: { town: "x" } })).result();
    assert.equal((invalid as { result: { error_code: string } }).result.error_code, "invalid_arguments");
    await lv.stop();
    await served; // serve resolves once its signal stopped the worker
  });
});

test("a ToolError is an error result; any other exception fails the activity with its class name", { skip: skip() }, async () => {
  class Flaky extends Error {}
  const charge = tool({
    name: "charge",
    effect: "side_effect",
    parameters: z.object({ amount: z.number() }),
    execute: async ({ amount }, ctx) => {
      if (amount <= 0) throw new ToolError("a charge needs a positive amount", "bad_amount");
      throw new Flaky(`gateway down for ${ctx.operationId}`);
    },
  });
  await live(async (lv) => {
    lv.serve([charge]);
    const failed = await (await lv.call(charge, { envelope: envelope(charge, { amount: 5 }, { operationId: "op-7" }) })).result();
    assert.deepEqual(failed, { failure: { type: "Flaky", message: "gateway down for op-7", nonRetryable: false } });
    const refused = await (await lv.call(charge, { args: { amount: 0 } })).result();
    assert.deepEqual(refused, {
      result: { v: 1, is_error: true, error_code: "bad_amount", content: [{ type: "text", text: "a charge needs a positive amount" }], attempt: 1 },
    });
    const bad = await (await lv.call(charge, { envelope: { ...envelope(charge, { amount: 5 }), v: 2 } })).result();
    assert.deepEqual(bad, { failure: { type: "BadEnvelope", message: "charge: the input is not a version 1 envelope", nonRetryable: true } });
  });
});

test("the reconcile activity is served", { skip: skip() }, async () => {
  const put = tool({
    name: "put",
    effect: "side_effect",
    parameters: z.object({ key: z.string() }),
    reconcile: ({ key }) => key === "done",
    execute: ({ key }) => key,
  });
  await live(async (lv) => {
    lv.serve([put]);
    const out = await (await lv.call(put, { args: { key: "done" }, kind: "toolround.reconcile" })).result();
    assert.deepEqual(out, { result: { v: 1, took_effect: true, content: [] } });
  });
});

test("heartbeats keep a call longer than the heartbeat timeout alive", { skip: skip() }, async () => {
  const slow = tool({
    name: "slow",
    effect: "read_only",
    heartbeat: 2,
    parameters: z.object({}),
    execute: () => new Promise((resolve) => setTimeout(() => resolve("slept 5s"), 5000)),
  });
  await live(async (lv) => {
    lv.serve([slow]);
    const out = await (await lv.call(slow, { heartbeatTimeout: 2 })).result();
    assert.deepEqual(out, { result: { v: 1, is_error: false, content: [{ type: "text", text: "slept 5s" }], attempt: 1 } });
  });
});

test("a cancel aborts ctx.signal within one heartbeat interval and the call ends cancelled", { skip: skip() }, async () => {
  const heartbeat = 3; // an interval of 1 s
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let abortedAt = 0;
  const waitForever = tool({
    name: "wait_forever",
    effect: "read_only",
    heartbeat,
    parameters: z.object({}),
    execute: (_a, ctx) =>
      new Promise((_, reject) => {
        started();
        ctx.signal.addEventListener("abort", () => {
          abortedAt = Date.now();
          reject(ctx.signal.reason);
        });
      }),
  });
  await live(async (lv) => {
    lv.serve([waitForever]);
    const h = await lv.call(waitForever, { heartbeatTimeout: heartbeat });
    await running;
    const asked = Date.now();
    await h.signal("cancel");
    assert.deepEqual(await h.result(), { cancelled: true });
    assert.ok(abortedAt > 0, "ctx.signal was aborted");
    // One interval, plus the signal's workflow task and the server's round trips.
    assert.ok(abortedAt - asked < (heartbeat / 3) * 1000 + 1500, `${abortedAt - asked} ms`);
  });
});

test("a refused tool is one line and serve stops", { skip: skip() }, async () => {
  const calculate = tool({ name: "calculate", effect: "read_only", parameters: z.object({ expression: z.string() }), execute: ({ expression }) => expression });
  await live(async (lv) => {
    await assert.rejects(lv.serve([calculate]), (e: unknown) => e instanceof ServeRefused);
    assert.deepEqual(lv.lines, ["toolround/tools: tool calculate refused: a built-in tool has that name"]);
  });
});

test("a rejected announce is one line and serve stops", { skip: skip() }, async () => {
  const echo = tool({ name: "echo", effect: "read_only", parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
  await live(async (lv) => {
    await assert.rejects(lv.serve([echo], { taskQueue: `rejected-${lv.queue}` }), (e: unknown) => e instanceof ServeRefused);
    assert.equal(lv.lines.length, 1, lv.lines.join("\n"));
    assert.ok(
      lv.lines[0].startsWith(`toolround/tools: the catalog usertools/rejected-${lv.queue} refused the announce: malformed announce`),
      lv.lines[0],
    );
  });
});

test("no answer to the announce is one line and serve stops", { skip: skip() }, async () => {
  const echo = tool({ name: "echo", effect: "read_only", parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
  await live(async (lv) => {
    const nobody = `test-nobody-${lv.tag}`;
    await assert.rejects(lv.serve([echo], { toolroundTaskQueue: nobody, announceTimeoutMs: 2000 }), (e: unknown) => e instanceof ServeRefused);
    assert.deepEqual(lv.lines, [
      `toolround/tools: no answer to the announce within 2s: is a toolround worker polling task queue "${nobody}" of namespace "default"?`,
    ]);
    await lv.client.workflow.getHandle(`usertools/${lv.queue}`).terminate("test over").catch(() => undefined);
  });
});

test("the README's tool worker announces its tool, serves a call and stops on SIGTERM", { skip: skip() }, async () => {
  const pkg = fileURLToPath(new URL("../../", import.meta.url));
  const readme = readFileSync(`${pkg}README.md`, "utf8");
  const section = readme.slice(readme.indexOf("## Your own tools"));
  const start = section.indexOf("```js\n") + "```js\n".length;
  const file = `${pkg}dist/test/readme-tool-worker.mjs`;
  const snippet = section.slice(start, section.indexOf("```", start));
  assert.ok(snippet.includes('taskQueue: "weather-tools"'), snippet);
  await live(async (lv) => {
    // The snippet as it is ("toolround/tools" resolves to this package's
    // own export), on a queue of this test's own.
    const queue = `weather-tools-${lv.tag}`;
    writeFileSync(file, snippet.replace('taskQueue: "weather-tools"', `taskQueue: "${queue}"`));
    const catalog = lv.client.workflow.getHandle(`usertools/${queue}`);
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, TEMPORAL_ADDRESS: ADDRESS, TOOLROUND_TASK_QUEUE: lv.toolroundQueue },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (b) => (output += b));
    child.stderr.on("data", (b) => (output += b));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      let announced: Awaited<ReturnType<Live["announced"]>> = [];
      for (let i = 0; i < 150 && !announced.length; i++) {
        // Query the catalog once the tool worker's announce started it.
        const running = (await catalog.describe().catch(() => undefined))?.status.name === "RUNNING";
        if (running) announced = await lv.announced(queue).catch(() => []);
        if (!announced.length) await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(announced.length, 1, `the README's tool worker never announced:\n${output}`);
      const [decl] = announced[0].tools as { name: string; schema_hash: string; description: string }[];
      assert.equal(decl.name, "weather");
      assert.equal(decl.description, "Today's weather in a city.");
      const env = { v: 1, tool: "weather", args_json: '{"city":"Nantes"}', operation_id: "", call_id: "c1", workflow_id: "w", schema_hash: decl.schema_hash, attempt: 1 };
      const h = await lv.call({ name: "weather" } as Tool, { queue, envelope: env });
      assert.deepEqual(await h.result(), { result: { v: 1, is_error: false, content: [{ type: "json", json: { city: "Nantes", sky: "clear" } }], attempt: 1 } });
      child.kill("SIGTERM");
      assert.equal(await exited, 0, output);
    } finally {
      child.kill("SIGKILL");
      await catalog.terminate("test over").catch(() => undefined);
    }
  });
});
