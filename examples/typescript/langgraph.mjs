// A LangGraph JS agent whose tool calls run as toolround rounds:
// RoundToolNode takes ToolNode's place, and each step's calls are one
// durable round. First its own tool, order_status (tool() of
// @langchain/core/tools), served by a tool worker the node starts in this
// process, then toolround's tools, in the same round. The model is
// @langchain/core's fake chat model, so it runs without an LLM.
//
//   (cd clients/typescript && npm ci && npm run build && npm pack)  # toolround-0.1.0.tgz, this repository's toolround
//   (cd examples/typescript && npm install)  # it and the frameworks, as examples/typescript/package.json says
//   CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... node examples/typescript/langgraph.mjs
//
// The edit_file call waits for approval: the graph interrupts with the
// pending call, and this script resumes it with a decision, asked here
// (APPROVE=yes approves without asking; the token must be an approver's).
// The checkpointer keeps the interrupted graph: with a persistent one
// another process may resume it. SESSION and RUN name the run. The worker
// runs the tools of TOOL_QUEUE (my-tools) when its TOOL_QUEUES names it
// (TOOL_QUEUES=my-tools:trusted); TEMPORAL_ADDRESS and TOOLROUND_TASK_QUEUE
// are the worker's.
import { AIMessage, AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { toolsCondition } from "@langchain/langgraph/prebuilt";
import { createInterface } from "node:readline/promises";
import { Client } from "toolround";
import { RoundToolNode } from "toolround/langgraph";
import { z } from "zod";

const orderStatus = tool(async ({ order_id }) => `order ${order_id}: shipped`, {
  name: "order_status",
  description: "Look an order up by its id.",
  schema: z.object({ order_id: z.string() }),
});

const turns = [
  new AIMessageChunk({
    content: "",
    tool_calls: [
      { id: "o1", name: "order_status", args: { order_id: "A-1" } },
      { id: "c1", name: "calculate", args: { expression: "6*7" } },
      { id: "e1", name: "edit_file", args: { path: "answer.txt", new_text: "42\n" } },
    ],
  }),
  new AIMessageChunk({ content: "I wrote the answer to answer.txt." }),
];
// One fake model per turn: it answers with its response's content and its
// chunk's tool calls.
const agent = async (s) => {
  const turn = turns.shift();
  const model = new FakeStreamingChatModel({ responses: [new AIMessage(turn.content)], chunks: [turn] });
  return { messages: [await model.invoke(s.messages)] };
};

const client = new Client(process.env.CONSOLE_URL ?? "http://127.0.0.1:8780", process.env.CONSOLE_TOKEN);
const run = process.env.RUN ?? `run-${Date.now()}`;
// The schemas of toolround's tools are the server's; with them in `tools`
// the node tells the round that the model has them (a real model gets them
// all with chatModel.bindTools(tools)).
const { tools: listed } = await client.tools({ provider: "claude-code" });
const tools = [orderStatus, ...listed.filter((t) => ["calculate", "edit_file"].includes(t.function.name))];
const node = new RoundToolNode(client, process.env.SESSION ?? "langgraph", run, {
  tools,
  taskQueue: process.env.TOOL_QUEUE ?? "my-tools",
  readOnly: ["order_status"],
});
await node.ready(); // the tool worker serves order_status
async function decide(pending) {
  console.log("waits for approval:", pending.tool, pending.arguments);
  if (process.env.APPROVE === "yes") return { approve: true };
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const answer = await rl.question("approve? [y/N] ");
  rl.close();
  return { approve: answer.trim().toLowerCase().startsWith("y") };
}
const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addNode("tools", node)
  .addEdge(START, "agent")
  .addConditionalEdges("agent", toolsCondition, ["tools", END])
  .addEdge("tools", "agent")
  .compile({ checkpointer: new MemorySaver() });
const config = { configurable: { thread_id: run } };
let out = await graph.invoke({ messages: [new HumanMessage("What is 6*7? Write it down.")] }, config);
while (out.__interrupt__?.length) {
  // A call waits for a decision.
  out = await graph.invoke(new Command({ resume: await decide(out.__interrupt__[0].value) }), config);
}
for (const m of out.messages) console.log(`${m.getType()}: ${m.content}`);
await node.close(); // stops the tool worker
