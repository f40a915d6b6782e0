// The application's own LangChain tools through rounds in LangGraph JS
// (SPEC Y6): served by a tool worker of toolround/tools on the real Temporal
// server, called by the real worker's rounds, driven by @langchain/core's
// FakeStreamingChatModel. tests/adapters_own_test.go runs them with
// TOOLROUND_TOOL_QUEUE, a trusted queue of the worker's TOOL_QUEUES; the
// tests of toolroundTools at the end need no server.
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

import { isFinished, roundWorkflowId, ToolroundError, type Client, type PendingCall } from "../index.js";
import { RoundToolNode, toolroundTools, type InterruptValue, type ToolSpecLike } from "../adapters/langgraph.js";
import { call, schemaHash } from "../tools/index.js";
import { serving, tools } from "./lg-orders.js";
import { live, skip as skipLive } from "./live.js";

const queue = process.env.TOOLROUND_TOOL_QUEUE ?? "";
const here = dirname(fileURLToPath(import.meta.url));
const skip = skipLive || (!queue && process.env.CI !== "true" ? "TOOLROUND_TOOL_QUEUE not set (tests/adapters_own_test.go sets it)" : false);

type Turn = { content?: string; tool_calls?: { id: string; name: string; args: Record<string, unknown> }[] };

// The model answers each turn with the next scripted message: one fake
// model per turn, which answers with its first chunk's tool calls.
function graph(turns: Turn[], node: RoundToolNode, checkpointer?: MemorySaver) {
  let i = 0;
  const agent = async (s: { messages: BaseMessage[] }) => {
    const t = turns[i++] ?? { content: "" };
    const model = new FakeStreamingChatModel({
      responses: [new AIMessage(t.content ?? "")],
      chunks: [new AIMessageChunk({ content: t.content ?? "", tool_calls: t.tool_calls ?? [] })],
    });
    return { messages: [await model.invoke(s.messages)] };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", node)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

function marks(): string {
  const dir = mkdtempSync(join(tmpdir(), "lg-own-"));
  process.env.MARKS = dir;
  return dir;
}

function lines(dir: string, name: string): string[] {
  const p = join(dir, name);
  return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean) : [];
}

function toolMessages(out: { messages: BaseMessage[] }): ToolMessage[] {
  return out.messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("the app's own tools and built-ins run in one round per turn, served by a tool worker in this process", { skip }, async () => {
  const { approver, session } = live("lg-own");
  const dir = marks();
  const asked: PendingCall[] = [];
  const listed = (await approver.tools({ provider: "claude-code" })).tools as ToolSpecLike[];
  const calculate = listed.filter((t) => t.function?.name === "calculate");
  const node = new RoundToolNode(approver, session, "own", {
    ...serving,
    tools: [...tools, ...calculate],
    taskQueue: queue,
    onApproval: (p) => {
      asked.push(p);
      return { approve: true, reason: "fine" };
    },
  });
  let out: { messages: BaseMessage[] };
  try {
    await node.ready();
    assert.ok(node.worker, "a tool worker in this process serves them");
    assert.equal(node.runHandle.defaults.provider, "claude-code");
    out = await graph(
      [
        {
          tool_calls: [
            { id: "l1", name: "lgjs_lookup_order", args: { id: "A-1" } },
            { id: "r1", name: "lgjs_refund_order", args: { id: "A-1", amount: 5 } },
            { id: "c1", name: "calculate", args: { expression: "6*7" } },
          ],
        },
        {
          tool_calls: [
            { id: "r2", name: "lgjs_refund_order", args: { id: "A-1", amount: 5 } },
            { id: "l2", name: "lgjs_lookup_order", args: { id: "none-9" } },
          ],
        },
        { content: "refunded" },
      ],
      node,
    ).invoke({ messages: [new HumanMessage("refund A-1")] });
  } finally {
    await node.close();
  }
  assert.equal(out.messages[out.messages.length - 1].content, "refunded");
  const r1 = await approver.getRound(roundWorkflowId(session, "own", 1));
  assert.ok(isFinished(r1));
  assert.deepEqual(r1.results!.map((r) => r.call_id), ["l1", "r1", "c1"], "the turn's three calls, own and built-in, are one round");
  const got = new Map(r1.results!.map((r) => [r.call_id, r]));
  assert.equal(got.get("l1")!.status, "ok");
  assert.match(got.get("l1")!.content ?? "", /"shipped"/);
  assert.equal(got.get("l1")!.approval?.decision, "not_needed", "read-only on a trusted queue");
  const op = got.get("r1")!.operation_id ?? "";
  assert.ok(op);
  assert.equal(got.get("r1")!.status, "ok");
  assert.equal(got.get("r1")!.approval?.decision, "approved");
  assert.equal(got.get("r1")!.content, `refunded 5 on A-1, key ${op}`, "the function got its operation id");
  assert.match(got.get("c1")!.content ?? "", /42/);
  assert.deepEqual(asked.map((p) => p.call_id), ["r1"], "the side effect asked the round's gate");
  const tms = toolMessages(out);
  assert.deepEqual(
    tms.map((m) => [m.tool_call_id, m.name, m.status]),
    [
      ["l1", "lgjs_lookup_order", "success"],
      ["r1", "lgjs_refund_order", "success"],
      ["c1", "calculate", "success"],
      ["r2", "lgjs_refund_order", "success"],
      ["l2", "lgjs_lookup_order", "error"],
    ],
  );
  assert.match(String(tms[0].content), /shipped/);
  assert.match(String(tms[1].content), new RegExp(op));
  // The same refund again in the next turn is deduped: it never runs twice;
  // a ToolError is an error the model reads.
  const r2 = await approver.getRound(roundWorkflowId(session, "own", 2));
  assert.ok(isFinished(r2));
  const got2 = new Map(r2.results!.map((r) => [r.call_id, r]));
  assert.equal(got2.get("r2")!.status, "deduped");
  assert.equal(got2.get("l2")!.status, "error");
  assert.match(String(tms[4].content), /no order none-9/);
  assert.deepEqual(lines(dir, "refund"), [op]);
  assert.deepEqual(lines(dir, "lookup"), ["A-1", "none-9"]);
  assert.equal(node.runHandle.number, 2);
});

test("an own side effect interrupts the graph and the resume runs it, once", { skip }, async () => {
  const { approver, session } = live("lg-own-interrupt");
  const dir = marks();
  const node = new RoundToolNode(approver, session, "own-interrupt", { ...serving, tools, taskQueue: queue, pollMs: 500 });
  const wid = roundWorkflowId(session, "own-interrupt", 1);
  let out: { messages: BaseMessage[]; __interrupt__?: { value: InterruptValue }[] };
  try {
    const app = graph(
      [
        {
          tool_calls: [
            { id: "k1", name: "lgjs_cancel_order", args: { id: "B-1" } },
            { id: "l1", name: "lgjs_lookup_order", args: { id: "B-1" } },
          ],
        },
        { content: "cancelled" },
      ],
      node,
      new MemorySaver(),
    );
    const config = { configurable: { thread_id: session } };
    out = await app.invoke({ messages: [new HumanMessage("cancel B-1")] }, config);
    const pending = (out.__interrupt__ ?? []).map((i) => i.value);
    assert.deepEqual(
      pending.map((p) => [p.call_id, p.tool, p.workflow_id]),
      [["k1", "lgjs_cancel_order", wid]],
    );
    assert.deepEqual(JSON.parse(String(pending[0].arguments)), { id: "B-1" });
    assert.deepEqual(lines(dir, "cancel"), [], "the side effect waits for the decision");
    out = await app.invoke(new Command({ resume: { approve: true, reason: "resumed" } }), config);
  } finally {
    await node.close();
  }
  assert.ok(!out.__interrupt__?.length);
  assert.equal(out.messages[out.messages.length - 1].content, "cancelled");
  const tms = toolMessages(out);
  assert.deepEqual(
    tms.map((m) => [m.tool_call_id, m.status]),
    [
      ["k1", "success"],
      ["l1", "success"],
    ],
  );
  assert.equal(tms[0].artifact.content, "cancelled B-1");
  const r = await approver.getRound(wid);
  assert.ok(isFinished(r));
  const k1 = r.results!.find((x) => x.call_id === "k1")!;
  assert.equal(k1.approval?.decision, "approved");
  assert.equal(k1.approval?.reason, "resumed");
  assert.deepEqual(lines(dir, "cancel"), ["B-1"], "it ran once");
  assert.deepEqual(lines(dir, "lookup"), ["B-1"]);
  await assert.rejects(approver.getRound(roundWorkflowId(session, "own-interrupt", 2)), (e: unknown) => e instanceof ToolroundError && e.status === 404);
});

// Runs one process of langgraph-restart.ts, with the own tools, to its exit
// and returns what it printed.
function processOnce(url: string, approver: Client, session: string, file: string, dir: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [join(here, "langgraph-restart.js"), ...args], {
    env: { ...process.env, TOOLROUND_URL: url, TOOLROUND_APPROVER_TOKEN: approver.token, SESSION: session, RUN: "restart", CHECKPOINTS: file, OWN_TOOL_QUEUE: queue, MARKS: dir },
    encoding: "utf8",
    timeout: 180_000,
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const out = r.stdout.trim().split("\n");
  return JSON.parse(out[out.length - 1]) as {
    interrupts: InterruptValue[];
    tools: { id: string; status: string; content: string; result: { status: string } }[];
    last: string;
    round: number;
  };
}

test("own side effects interrupt in one process and new processes, each with a tool worker of its own, resume the same round", { skip }, async () => {
  const { url, approver, session } = live("lg-own-restart");
  const dir = marks();
  const file = join(mkdtempSync(join(tmpdir(), "lg-own-")), "checkpoints.json");
  const wid = roundWorkflowId(session, "restart", 1);

  const first = processOnce(url, approver, session, file, dir, "start");
  assert.deepEqual(
    first.interrupts.map((i) => [i.call_id, i.tool, i.workflow_id]),
    [["k1", "lgjs_cancel_order", wid]],
  );
  assert.deepEqual(first.tools, []);
  const view = await approver.getRound(wid);
  assert.ok(!isFinished(view));
  assert.deepEqual(view.pending.map((p) => p.call_id).sort(), ["k1", "k2"]);
  assert.deepEqual(lines(dir, "cancel"), []);

  const second = processOnce(url, approver, session, file, dir, "resume", "approve");
  assert.deepEqual(
    second.interrupts.map((i) => [i.call_id, i.workflow_id]),
    [["k2", wid]],
  );

  const third = processOnce(url, approver, session, file, dir, "resume", "deny");
  assert.deepEqual(third.interrupts, []);
  assert.equal(third.last, "all done");
  assert.equal(third.round, 1);
  assert.deepEqual(
    third.tools.map((t) => [t.id, t.status]),
    [
      ["l1", "success"],
      ["k1", "success"],
      ["k2", "error"],
    ],
  );
  assert.match(third.tools[0].content, /shipped/);
  assert.match(third.tools[1].content, /cancelled R-1/);
  assert.equal(third.tools[2].result.status, "skipped");
  assert.deepEqual(lines(dir, "cancel"), ["R-1"], "the approved side effect ran once, the denied one never");
  assert.deepEqual(lines(dir, "lookup"), ["R-1"]);
  await assert.rejects(approver.getRound(roundWorkflowId(session, "restart", 2)), (e: unknown) => e instanceof ToolroundError && e.status === 404);
});

function toolWorker(dir: string, logs: string[]): ChildProcess {
  const file = join(here, "lg-own-worker.js");
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
  const { approver, session } = live("lg-own-kill");
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
    const node = new RoundToolNode(approver, session, "own-kill", { ...serving, tools, taskQueue: queue, serve: false, onApproval: () => true });
    await node.ready();
    assert.equal(node.worker, undefined);
    const running = graph(
      [
        { tool_calls: [{ id: "h1", name: "lgjs_refund_order", args: { id: "hold-B-2", amount: 3 } }] },
        { tool_calls: [{ id: "s1", name: "lgjs_lookup_order", args: { id: "slow-C-3" } }] },
        { content: "found" },
      ],
      node,
    ).invoke({ messages: [new HumanMessage("refund, then find")] });
    await until("the refund's attempt", () => lines(dir, "refund").length === 1);
    assert.equal(await killed(tw), "SIGKILL");
    tw = start();
    await until("the slow lookup's first attempt", () => lines(dir, "lookup").length === 1);
    assert.equal(await killed(tw), "SIGKILL");
    start();
    const out = await running;
    assert.equal(out.messages[out.messages.length - 1].content, "found");

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
    const tms = toolMessages(out);
    assert.deepEqual(
      tms.map((m) => [m.tool_call_id, m.status]),
      [
        ["h1", "error"],
        ["s1", "success"],
      ],
    );
    assert.equal(tms[0].artifact.status, "unknown_outcome");
    assert.match(String(tms[1].content), /shipped/, "the model reads both");
  } catch (e) {
    console.log("tool worker logs:\n" + logs.join(""));
    throw e;
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) await killed(c);
  }
});

test("a queue the worker does not run is refused at the start, naming TOOL_QUEUES", { skip }, async () => {
  const { approver, session } = live("lg-own-refused");
  const logged: string[] = [];
  const node = new RoundToolNode(approver, session, "own-refused", { ...serving, tools, taskQueue: `not-listed-${queue}`, worker: { log: (l) => logged.push(l) } });
  await assert.rejects(
    node.ready(),
    (e: Error) => e.name === "ServeRefused" && e.message.includes(`not-listed-${queue}`) && e.message.includes("TOOL_QUEUES"),
  );
  assert.ok(logged.length >= 1, "the refusal is printed, one line a tool");
  await assert.rejects(node.invoke([new AIMessage({ content: "", tool_calls: [{ id: "x", name: "lgjs_cancel_order", args: { id: "x" } }] })]), /not-listed-/);
});

test("toolroundTools: the zod schema is the announced schema, a call invokes the tool as ToolNode does", async () => {
  const [lookup, refund] = await toolroundTools(tools, serving);
  assert.deepEqual([lookup.problems, refund.problems], [[], []]);
  assert.equal(lookup.effect, "read_only");
  assert.equal(refund.effect, "side_effect", "a tool not named read-only is a side effect");
  assert.equal(lookup.heartbeat, 3);
  assert.equal(lookup.description, "Look an order up by its id.");
  assert.deepEqual(lookup.parameters.required, ["id"]);
  assert.equal(lookup.announcement().schema_hash, schemaHash(lookup.parameters));
  const env = (t: typeof lookup, args: unknown) => ({ v: 1, tool: t.name, args_json: JSON.stringify(args), operation_id: "op-7", call_id: "c9", workflow_id: "w", schema_hash: t.schemaHash, attempt: 1 });
  process.env.MARKS = mkdtempSync(join(tmpdir(), "lg-own-"));
  assert.deepEqual(await call(refund, env(refund, { id: "A-1", amount: 2 })), { v: 1, is_error: false, content: [{ type: "text", text: "refunded 2 on A-1, key op-7" }] });
  assert.equal((await call(refund, env(refund, { id: "A-1", amount: "2" }))).error_code, "invalid_arguments");
  assert.deepEqual((await call(lookup, env(lookup, { id: "none-1" }))).error_code, "no_order");
  const seen = tool(async (_args, config) => `call ${config.toolCall?.id}`, { name: "seen", description: "d", schema: z.object({}) });
  const [s] = await toolroundTools([seen]);
  assert.deepEqual((await call(s, env(s, {}))).content, [{ type: "text", text: "call c9" }], "the tool gets the round's call id as ToolNode gives it");
  const odd = await toolroundTools([tool(async () => "x", { name: "odd", description: "", schema: { type: "object", properties: {} } })]);
  assert.match(odd[0].problems.join("\n"), /tool odd: parameters is not a zod 4 schema/);
});
