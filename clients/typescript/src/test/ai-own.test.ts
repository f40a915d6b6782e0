// The application's own AI SDK tools through rounds (SPEC Y6): served by a
// tool worker of toolround/tools on the real Temporal server, called by the
// real worker's rounds, driven by the SDK's MockLanguageModelV3.
// tests/adapters_own_test.go runs them with TOOLROUND_TOOL_QUEUE, a trusted
// queue of the worker's TOOL_QUEUES.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { isFinished, roundWorkflowId, type Client, type PendingCall } from "../index.js";
import { RoundCallError, ownTools, toolroundTools } from "../adapters/ai.js";
import { call, schemaHash } from "../tools/index.js";
import { serving, tools } from "./ai-orders.js";
import { live, skip as skipLive } from "./live.js";

const queue = process.env.TOOLROUND_TOOL_QUEUE ?? "";
const skip = skipLive || (!queue && process.env.CI !== "true" ? "TOOLROUND_TOOL_QUEUE not set (tests/adapters_own_test.go sets it)" : false);

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const toolCall = (toolCallId: string, toolName: string, input: unknown) => ({ type: "tool-call" as const, toolCallId, toolName, input: JSON.stringify(input) });
const callsStep = (...calls: ReturnType<typeof toolCall>[]) => ({ content: calls, finishReason: { unified: "tool-calls" as const, raw: undefined }, usage, warnings: [] });
const textStep = (text: string) => ({ content: [{ type: "text" as const, text }], finishReason: { unified: "stop" as const, raw: undefined }, usage, warnings: [] });

function marks(): string {
  const dir = mkdtempSync(join(tmpdir(), "ai-own-"));
  process.env.MARKS = dir;
  return dir;
}

function lines(dir: string, name: string): string[] {
  const p = join(dir, name);
  return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean) : [];
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("the app's own tool()s run in one round per step, served by a tool worker in this process", { skip }, async () => {
  const { approver, session } = live("ai-own");
  const dir = marks();
  const model = new MockLanguageModelV3({
    doGenerate: [
      callsStep(toolCall("l1", "ai_lookup_order", { id: "A-1" }), toolCall("r1", "ai_refund_order", { id: "A-1", amount: 5 })),
      callsStep(toolCall("r2", "ai_refund_order", { id: "A-1", amount: 5 })),
      textStep("refunded"),
    ],
  });
  const asked: PendingCall[] = [];
  const rt = await ownTools(approver, session, "own", tools, {
    ...serving,
    taskQueue: queue,
    onApproval: (p) => {
      asked.push(p);
      return { approve: true };
    },
  });
  try {
    assert.ok(rt.worker, "a tool worker in this process serves them");
    const res = await generateText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(5), prompt: "refund A-1" });
    assert.equal(res.text, "refunded");
  } finally {
    await rt.close();
  }
  const r1 = await approver.getRound(roundWorkflowId(session, "own", 1));
  assert.ok(isFinished(r1));
  const got = new Map(r1.results!.map((r) => [r.call_id, r]));
  assert.deepEqual([...got.keys()].sort(), ["l1", "r1"], "the step's two calls are one round");
  assert.equal(got.get("l1")!.status, "ok");
  assert.match(got.get("l1")!.content ?? "", /"shipped"/);
  assert.equal(got.get("l1")!.approval?.decision, "not_needed", "read-only on a trusted queue");
  const op = got.get("r1")!.operation_id ?? "";
  assert.ok(op);
  assert.equal(got.get("r1")!.status, "ok");
  assert.equal(got.get("r1")!.approval?.decision, "approved");
  assert.equal(got.get("r1")!.content, `refunded 5 on A-1, key ${op}`, "the function got its operation id");
  assert.deepEqual(asked.map((p) => p.call_id), ["r1"], "the side effect asked the round's gate");
  // The same refund in the next step is deduped: it never runs twice.
  const r2 = await approver.getRound(roundWorkflowId(session, "own", 2));
  assert.ok(isFinished(r2));
  assert.equal(r2.results![0].status, "deduped");
  assert.deepEqual(lines(dir, "refund"), [op]);
  assert.deepEqual(lines(dir, "lookup"), ["A-1"]);
  assert.match(JSON.stringify(model.doGenerateCalls[1].prompt), new RegExp(op), "the model read the round's results");
});

function toolWorker(dir: string, logs: string[]): ChildProcess {
  const file = join(dirname(fileURLToPath(import.meta.url)), "ai-own-worker.js");
  const child = spawn(process.execPath, [file], { env: { ...process.env, TOOL_QUEUE: queue, MARKS: dir }, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (b) => logs.push(String(b)));
  child.stderr!.on("data", (b) => logs.push(String(b)));
  return child;
}

async function available(client: Client): Promise<boolean> {
  const listed = await client.tools({ provider: "claude-code", worker: true });
  return Boolean(listed.queues?.find((q) => q.queue === queue)?.available);
}

function killed(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    child.once("exit", (_code, signal) => resolve(signal));
    child.kill("SIGKILL");
  });
}

test("a tool worker killed in a side effect's call: unknown_outcome, never a second run; in a read-only call: retried on the next one", { skip }, async () => {
  const { approver, session } = live("ai-own-kill");
  const dir = marks();
  const logs: string[] = [];
  const children: ChildProcess[] = [];
  const start = () => {
    const c = toolWorker(dir, logs);
    children.push(c);
    return c;
  };
  try {
    let tw = start();
    await until("the tool worker", () => available(approver));
    const model = new MockLanguageModelV3({
      doGenerate: [
        callsStep(toolCall("h1", "ai_refund_order", { id: "hold-B-2", amount: 3 })),
        callsStep(toolCall("s1", "ai_lookup_order", { id: "slow-C-3" })),
        textStep("done"),
      ],
    });
    const rt = await ownTools(approver, session, "own-kill", tools, { ...serving, taskQueue: queue, serve: false, onApproval: () => ({ approve: true }) });
    assert.equal(rt.worker, undefined);
    const running = generateText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(5), prompt: "refund, then look" });
    await until("the refund's attempt", () => lines(dir, "refund").length === 1);
    assert.equal(await killed(tw), "SIGKILL");
    tw = start();
    await until("the slow lookup's first attempt", () => lines(dir, "lookup").length === 1);
    assert.equal(await killed(tw), "SIGKILL");
    start();
    const res = await running;
    assert.equal(res.text, "done");

    const refund = res.steps[0].content.find((p) => p.type === "tool-error" && p.toolCallId === "h1");
    assert.ok(refund && refund.type === "tool-error" && refund.error instanceof RoundCallError, JSON.stringify(res.steps[0].content));
    assert.equal(refund.error.result.status, "unknown_outcome");
    const r1 = await approver.getRound(roundWorkflowId(session, "own-kill", 1));
    assert.ok(isFinished(r1));
    assert.equal(r1.results![0].status, "unknown_outcome");
    assert.deepEqual(lines(dir, "refund"), [r1.results![0].operation_id], "the side effect ran once");

    const r2 = await approver.getRound(roundWorkflowId(session, "own-kill", 2));
    assert.ok(isFinished(r2));
    const look = r2.results![0];
    assert.equal(look.status, "ok", look.content);
    assert.equal(look.attempts, 2);
    assert.match(look.content ?? "", /"shipped"/);
    assert.deepEqual(lines(dir, "lookup"), ["slow-C-3", "slow-C-3"]);
    assert.match(String(res.steps[1].toolResults[0]?.output), /shipped/);
  } catch (e) {
    console.log("tool worker logs:\n" + logs.join(""));
    throw e;
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) await killed(c);
  }
});

test("a queue the worker does not run is refused at the start, naming TOOL_QUEUES", { skip }, async () => {
  const { approver, session } = live("ai-own-refused");
  const logged: string[] = [];
  await assert.rejects(
    ownTools(approver, session, "own-refused", tools, { ...serving, taskQueue: `not-listed-${queue}`, worker: { log: (l) => logged.push(l) } }),
    (e: Error) => e.name === "ServeRefused" && e.message.includes(`not-listed-${queue}`) && e.message.includes("TOOL_QUEUES"),
  );
  assert.ok(logged.length >= 1, "the refusal is printed, one line a tool");
});

test("toolroundTools: the zod inputSchema is the announced schema, a call runs execute with the call's context", async () => {
  const [lookup, refund] = await toolroundTools(tools, serving);
  assert.deepEqual([lookup.problems, refund.problems], [[], []]);
  assert.equal(lookup.effect, "read_only");
  assert.equal(refund.effect, "side_effect", "a tool not named read-only is a side effect");
  assert.equal(lookup.heartbeat, 3);
  assert.deepEqual(lookup.parameters.required, ["id"]);
  assert.equal(lookup.announcement().schema_hash, schemaHash(lookup.parameters));
  process.env.MARKS = mkdtempSync(join(tmpdir(), "ai-own-"));
  const env = (args: unknown) => ({ v: 1, tool: refund.name, args_json: JSON.stringify(args), operation_id: "op-7", call_id: "c9", workflow_id: "w", schema_hash: refund.schemaHash, attempt: 1 });
  assert.deepEqual(await call(refund, env({ id: "A-1", amount: 2 })), { v: 1, is_error: false, content: [{ type: "text", text: "refunded 2 on A-1, key op-7" }] });
  const bad = await call(refund, env({ id: "A-1", amount: "2" }));
  assert.equal(bad.error_code, "invalid_arguments");
  const odd = await toolroundTools({ odd: tool({ description: "", inputSchema: jsonSchema({ type: "object" }), execute: async () => "x" }) });
  assert.match(odd[0].problems.join("\n"), /tool odd: parameters is not a zod 4 schema/);
});

test("ownTools refuses a tool with needsApproval: the round's gate asks", async () => {
  const asks = tool({ description: "", inputSchema: tools.ai_refund_order.inputSchema, needsApproval: true, execute: async () => "x" });
  await assert.rejects(ownTools({} as Client, "s", "r", { asks }, { taskQueue: "q" }), /tool asks has needsApproval; the round's gate asks/);
});
