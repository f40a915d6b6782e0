// The LangGraph JS adapter against the real worker, with @langchain/core's
// fake chat model.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { toolsCondition } from "@langchain/langgraph/prebuilt";

import { isFinished, roundWorkflowId } from "../index.js";
import { RoundToolNode } from "../adapters/langgraph.js";
import { ALL_TOOLS, live, skip } from "./live.js";

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
