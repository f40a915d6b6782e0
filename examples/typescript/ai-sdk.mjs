// A Vercel AI SDK app whose tool calls run as toolround rounds: each step's
// calls are one durable round. The model is the SDK's MockLanguageModelV3,
// so it runs without an LLM.
//
//   (cd clients/typescript && npm ci && npm run build && npm pack)  # toolround-0.1.0.tgz, this repository's toolround
//   (cd examples/typescript && npm install)  # it and the frameworks, as examples/typescript/package.json says
//   CONSOLE_URL=http://127.0.0.1:8780 CONSOLE_TOKEN=... node examples/typescript/ai-sdk.mjs
//
// The edit_file call waits for approval: on the console's page, or here
// with APPROVE=yes (an approver token). SESSION and RUN name the run.
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { Client } from "toolround";
import { roundTools } from "toolround/ai";

const usage = { inputTokens: { total: 0 }, outputTokens: { total: 0 } };
const calls = (...c) => ({ content: c.map(([id, toolName, input]) => ({ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(input) })), finishReason: { unified: "tool-calls" }, usage, warnings: [] });
const model = new MockLanguageModelV3({
  doGenerate: [
    calls(["f1", "find_tools", { query: "select:calculate,edit_file" }]), // claude-code's calls return their schema until it loaded them (S2, S4)
    calls(["c1", "calculate", { expression: "6*7" }], ["e1", "edit_file", { path: "answer.txt", new_text: "42\n" }]),
    { content: [{ type: "text", text: "I wrote the answer to answer.txt." }], finishReason: { unified: "stop" }, usage, warnings: [] },
  ],
});
const client = new Client(process.env.CONSOLE_URL ?? "http://127.0.0.1:8780", process.env.CONSOLE_TOKEN);
// The schemas are the server's: claude-code's tools array loads every built-in tool.
const { tools: listed } = await client.tools({ provider: "claude-code" });
const specs = listed.filter((t) => ["find_tools", "calculate", "edit_file"].includes(t.function.name));
const rt = roundTools(client, process.env.SESSION ?? "ai-sdk", process.env.RUN ?? `run-${Date.now()}`, specs, {
  provider: "claude-code",
  onApproval: (p) => {
    console.log("waits for approval:", p.tool, p.arguments);
    return process.env.APPROVE === "yes" ? { approve: true } : null; // null: the console decides
  },
});
const res = await generateText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(5), prompt: "What is 6*7? Write it down." });
for (const step of res.steps) for (const r of step.toolResults) console.log(`tool ${r.toolName}: ${r.output}`);
console.log(`assistant: ${res.text} (${rt.run.number} round)`);
