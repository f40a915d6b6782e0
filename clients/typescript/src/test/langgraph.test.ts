// The LangGraph JS adapter against the real worker, with @langchain/core's
// fake chat model.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { toolsCondition } from "@langchain/langgraph/prebuilt";

import { Client, isFinished, roundWorkflowId, ToolroundError } from "../index.js";
import { decisionOf, RoundToolNode, type InterruptValue } from "../adapters/langgraph.js";
import { ALL_TOOLS, live, skip } from "./live.js";

const here = dirname(fileURLToPath(import.meta.url));

type Turn = { content?: string; tool_calls?: { id: string; name: string; args: Record<string, unknown> }[] };

// The model answers each turn with the next scripted message: one fake
// model per turn, which answers with its first response's content and its
// first chunk's tool calls.
function graph(turns: Turn[], node: RoundToolNode) {
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
    .compile();
}

test("RoundToolNode runs each step's calls as one round", { skip }, async () => {
  const { approver, session, workdir } = live("lg-steps");
  const asked: string[] = [];
  const node = new RoundToolNode(approver, session, "lg", {
    provider: "claude-code",
    state: { fetched: ALL_TOOLS },
    onApproval: (p) => {
      asked.push(p.call_id);
      return true;
    },
  });
  const out = await graph(
    [
      {
        tool_calls: [
          { id: "c1", name: "calculate", args: { expression: "6*7" } },
          { id: "e1", name: "edit_file", args: { path: "lg-ts.txt", new_text: "langgraph js\n" } },
          { id: "x1", name: "no_such_tool", args: {} },
        ],
      },
      { tool_calls: [{ id: "r1", name: "read_files", args: { paths: ["lg-ts.txt"] } }] },
      { content: "all done" },
    ],
    node,
  ).invoke({ messages: [new HumanMessage("compute and write")] });
  const msgs = out.messages as BaseMessage[];
  const tools = msgs.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
  assert.deepEqual(tools.map((m) => m.tool_call_id), ["c1", "e1", "x1", "r1"]);
  assert.match(String(tools[0].content), /42/);
  assert.equal(tools[0].status, "success");
  assert.equal(tools[1].status, "success");
  assert.deepEqual(asked, ["e1"], "the approval went through the gate");
  assert.equal(tools[2].status, "error");
  assert.equal(tools[2].artifact.status, "unknown");
  assert.match(String(tools[3].content), /langgraph js/);
  assert.equal(msgs[msgs.length - 1].content, "all done");
  assert.ok(AIMessage.isInstance(msgs[msgs.length - 1]));
  // Two steps: two rounds of the run, numbered by the handle.
  assert.equal(node.runHandle.number, 2);
  const r1 = await approver.getRound(roundWorkflowId(session, "lg", 1));
  assert.ok(isFinished(r1));
  assert.deepEqual(r1.results!.map((r) => r.call_id), ["c1", "e1", "x1"]);
  assert.equal(readFileSync(join(workdir, "lg-ts.txt"), "utf8"), "langgraph js\n");
});

test("a denied call is an error ToolMessage", { skip }, async () => {
  const { approver, session, workdir } = live("lg-deny");
  const node = new RoundToolNode(approver, session, "lgdeny", {
    provider: "claude-code",
    state: { fetched: ALL_TOOLS },
    onApproval: () => ({ approve: false, reason: "no" }),
  });
  const out = await graph([{ tool_calls: [{ id: "e1", name: "edit_file", args: { path: "no-lg.txt", new_text: "x" } }] }, { content: "ok" }], node).invoke({
    messages: [new HumanMessage("write")],
  });
  const tm = (out.messages as BaseMessage[]).find((m): m is ToolMessage => ToolMessage.isInstance(m))!;
  assert.equal(tm.status, "error");
  assert.equal(tm.artifact.status, "skipped");
  assert.ok(!existsSync(join(workdir, "no-lg.txt")));
});

test("RoundToolNode takes a bare list of messages and refuses one without calls", { skip }, async () => {
  const { approver, session } = live("lg-list");
  const node = new RoundToolNode(approver, session, "lglist", { provider: "claude-code", state: { fetched: ALL_TOOLS } });
  const out = (await node.invoke([new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "calculate", args: { expression: "3*3" } }] })])) as ToolMessage[];
  assert.equal(out.length, 1);
  assert.match(String(out[0].content), /9/);
  await assert.rejects(node.invoke([new AIMessage("no calls")]), /no tool calls/);
  await assert.rejects(node.invoke({ other: [] }), /has no messages list/);
});

// Runs one process of langgraph-restart.ts to its exit and returns what it
// printed.
function processOnce(url: string, approver: Client, session: string, file: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [join(here, "langgraph-restart.js"), ...args], {
    env: { ...process.env, TOOLROUND_URL: url, TOOLROUND_APPROVER_TOKEN: approver.token, SESSION: session, RUN: "restart", CHECKPOINTS: file },
    encoding: "utf8",
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const lines = r.stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]) as {
    interrupts: InterruptValue[];
    tools: { id: string; status: string; content: string; result: { status: string } }[];
    last: string;
    round: number;
  };
}

test("a waiting call interrupts and a new process resumes the same round", { skip }, async () => {
  const { url, approver, session, workdir } = live("lg-restart");
  const file = join(mkdtempSync(join(tmpdir(), "lg-ts-")), "checkpoints.json");
  const wid = roundWorkflowId(session, "restart", 1);
  const a = join(workdir, "lg-ts-restart-a.txt");
  const b = join(workdir, "lg-ts-restart-b.txt");

  // The first process: the round waits for e1 and e2; the graph interrupts
  // with e1's pending entry and the process exits.
  const first = processOnce(url, approver, session, file, "start");
  assert.deepEqual(
    first.interrupts.map((i) => [i.call_id, i.tool, i.workflow_id]),
    [["e1", "edit_file", wid]],
  );
  assert.ok(first.interrupts[0].approval_id);
  assert.deepEqual(first.tools, []);
  const view = await approver.getRound(wid);
  assert.ok(!isFinished(view));
  assert.deepEqual(view.pending.map((p) => p.call_id).sort(), ["e1", "e2"]);
  assert.ok(!existsSync(a));

  // A second process resumes with an approval of e1: the same round goes on
  // and interrupts for e2, the next call that waits.
  const second = processOnce(url, approver, session, file, "resume", "approve");
  assert.deepEqual(
    second.interrupts.map((i) => [i.call_id, i.workflow_id]),
    [["e2", wid]],
  );
  const still = await approver.getRound(wid);
  assert.ok(!isFinished(still));
  assert.deepEqual(still.pending.map((p) => p.call_id), ["e2"]);

  // A third process denies e2: the round finishes, once, and the graph goes
  // on to the model's last turn.
  const third = processOnce(url, approver, session, file, "resume", "deny");
  assert.deepEqual(third.interrupts, []);
  assert.deepEqual(
    third.tools.map((t) => [t.id, t.status]),
    [["c1", "success"], ["e1", "success"], ["e2", "error"]],
  );
  assert.match(third.tools[0].content, /42/);
  assert.equal(third.tools[2].result.status, "skipped");
  assert.equal(third.last, "all done");
  assert.equal(third.round, 1);
  assert.equal(readFileSync(a, "utf8"), "a\n");
  assert.ok(!existsSync(b));
  const res = await approver.getRound(wid);
  assert.ok(isFinished(res));
  assert.deepEqual(res.results!.map((r) => r.call_id), ["c1", "e1", "e2"]);
  assert.equal(res.results![1].status, "ok");
  await assert.rejects(approver.getRound(roundWorkflowId(session, "restart", 2)), (e: unknown) => e instanceof ToolroundError && e.status === 404);
});

test("interrupt: false waits for the console", { skip }, async () => {
  const { approver, session, workdir } = live("lg-block");
  const wid = roundWorkflowId(session, "lgblock", 1);
  const person = (async () => {
    for (let i = 0; i < 300; i++) {
      for (const entry of await approver.inbox(session)) {
        if (entry.workflow_id !== wid) continue;
        for (const p of entry.pending ?? []) {
          await approver.approve(wid, p.call_id, p.approval_id, { waitId: p.wait_id });
          return;
        }
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const node = new RoundToolNode(approver, session, "lgblock", { provider: "claude-code", state: { fetched: ALL_TOOLS }, interrupt: false, pollMs: 500 });
  const out = await graph([{ tool_calls: [{ id: "e1", name: "edit_file", args: { path: "lg-ts-block.txt", new_text: "x\n" } }] }, { content: "ok" }], node).invoke({
    messages: [new HumanMessage("write")],
  });
  await person;
  const tm = (out.messages as BaseMessage[]).find((m): m is ToolMessage => ToolMessage.isInstance(m))!;
  assert.equal(tm.status, "success");
  assert.equal(readFileSync(join(workdir, "lg-ts-block.txt"), "utf8"), "x\n");
});

test("resume values", () => {
  assert.deepEqual(decisionOf(true), { approve: true });
  assert.deepEqual(decisionOf("deny"), { approve: false });
  assert.deepEqual(decisionOf({ approve: true, args: { path: "x" } }).args, { path: "x" });
  assert.throws(() => decisionOf({ aprove: true }), /aprove/);
  assert.throws(() => decisionOf({ approve: true, reasn: "x" }), /unknown fields reasn/);
});
