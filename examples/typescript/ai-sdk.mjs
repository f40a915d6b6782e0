// A Vercel AI SDK app whose tool calls run as toolround rounds: each step's
// calls are one durable round. First its own tool(), lookup_order, served by
// a tool worker the adapter starts in this process, then toolround's tools.
// The model is the SDK's MockLanguageModelV3, so it runs without an LLM.
//
//   (cd clients/typescript && npm ci && npm run build && npm pack)  # toolround-0.1.0.tgz, this repository's toolround
//   (cd examples/typescript && npm install)  # it and the frameworks, as examples/typescript/package.json says
//   CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... node examples/typescript/ai-sdk.mjs
//
// The edit_file call waits for approval: on the console's page, or here
// with APPROVE=yes (an approver token). SESSION and RUN name the run. The
// worker runs the tools of TOOL_QUEUE (my-tools) when its TOOL_QUEUES names
// it (TOOL_QUEUES=my-tools:trusted); TEMPORAL_ADDRESS and TOOLROUND_TASK_QUEUE
// are the worker's.
import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Client } from "toolround";
import { ownTools } from "toolround/ai";
import { z } from "zod";

const lookupOrder = tool({
  description: "Look an order up by its id.",
  inputSchema: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => `order ${order_id}: shipped`,
});

const usage = { inputTokens: { total: 0 }, outputTokens: { total: 0 } };
const calls = (...c) => ({ content: c.map(([id, toolName, input]) => ({ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) })), finishReason: { unified: "tool-calls" }, usage, warnings: [] });
const model = new MockLanguageModelV3({
  doGenerate: [
    calls(["o1", "lookup_order", { order_id: "A-1" }], ["c1", "calculate", { expression: "6*7" }], ["e1", "edit_file", { path: "answer.txt", new_text: "42\n" }]),
    { content: [{ type: "text", text: "I wrote the answer to answer.txt." }], finishReason: { unified: "stop" }, usage, warnings: [] },
  ],
});
const client = new Client(process.env.CONSOLE_URL ?? "http://127.0.0.1:8780", process.env.CONSOLE_TOKEN);
// The schemas are the server's; with an own tool the adapter tells the round
// that the model has every schema the SDK gave it.
const { tools: listed } = await client.tools({ provider: "claude-code" });
const specs = listed.filter((t) => ["calculate", "edit_file"].includes(t.function.name));
const rt = await ownTools(client, process.env.SESSION ?? "ai-sdk", process.env.RUN ?? `run-${Date.now()}`, { lookup_order: lookupOrder }, {
  taskQueue: process.env.TOOL_QUEUE ?? "my-tools",
  readOnly: ["lookup_order"],
  specs,
  provider: "claude-code",
  onApproval: (p) => {
    console.log("waits for approval:", p.tool, p.arguments);
    return process.env.APPROVE === "yes" ? { approve: true } : null; // null: the console decides
  },
});
const res = await generateText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(5), prompt: "What is 6*7? Write it down." });
for (const step of res.steps) for (const r of step.toolResults) console.log(`tool ${r.toolName}: ${r.output}`);
console.log(`assistant: ${res.text} (${rt.run.number} round)`);
await rt.close();
