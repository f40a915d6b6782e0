// The Vercel AI SDK adapter against the real worker, with the SDK's own
// MockLanguageModelV3 as the model.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { generateText, simulateReadableStream, stepCountIs, streamText } from "ai";
import { MockLanguageModelV3 } from "ai/test";

import { roundWorkflowId, isFinished, type PendingCall } from "../index.js";
import { RoundCallError, roundTools } from "../adapters/ai.js";
import { ALL_TOOLS, live, skip } from "./live.js";

const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: "object", properties, required });
const SPECS = [
  { type: "function", function: { name: "calculate", description: "Evaluate an expression.", parameters: obj({ expression: { type: "string" } }, ["expression"]) } },
  {
    type: "function",
    function: { name: "edit_file", description: "Write a file.", parameters: obj({ path: { type: "string" }, new_text: { type: "string" } }, ["path", "new_text"]) },
  },
  { name: "read_files", description: "Read files.", parameters: obj({ paths: { type: "array", items: { type: "string" } } }, ["paths"]) },
];

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const toolCall = (toolCallId: string, toolName: string, input: unknown) => ({ type: "tool-call" as const, toolCallId, toolName, input: JSON.stringify(input) });
const callsStep = (...calls: ReturnType<typeof toolCall>[]) => ({ content: calls, finishReason: { unified: "tool-calls" as const, raw: undefined }, usage, warnings: [] });
const textStep = (text: string) => ({ content: [{ type: "text" as const, text }], finishReason: { unified: "stop" as const, raw: undefined }, usage, warnings: [] });

test("generateText: each step's tool calls run as one round, approvals included", { skip }, async () => {
  const { approver, session, workdir } = live("ai-generate");
  const model = new MockLanguageModelV3({
    doGenerate: [
      callsStep(
        toolCall("c1", "calculate", { expression: "6*7" }),
        toolCall("e1", "edit_file", { path: "ai.txt", new_text: "vercel\n" }),
        toolCall("m1", "read_files", { paths: ["missing-ai.txt"] }),
      ),
      callsStep(toolCall("r1", "read_files", { paths: ["ai.txt"] })),
      textStep("all done"),
    ],
  });
  const asked: PendingCall[] = [];
  const rt = roundTools(approver, session, "ai", SPECS, {
    provider: "claude-code",
    state: { fetched: ALL_TOOLS },
    onApproval: (p) => {
      asked.push(p);
      return { approve: true };
    },
  });
  const res = await generateText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(5), prompt: "compute and write" });
  assert.equal(res.text, "all done");
  assert.equal(res.steps.length, 3);
  const [first, second] = res.steps;
  const out = new Map(first.toolResults.map((r) => [r.toolCallId, r.output]));
  assert.match(String(out.get("c1")), /42/);
  assert.ok(out.has("e1"), "the approved edit has a result");
  assert.deepEqual(asked.map((p) => p.call_id), ["e1"], "the approval went through the round's gate");
  // A call that failed in the round is the SDK's tool error, with the round's message.
  const failed = first.content.find((p) => p.type === "tool-error" && p.toolCallId === "m1");
  assert.ok(failed && failed.type === "tool-error");
  assert.ok(failed.error instanceof RoundCallError);
  assert.equal(failed.error.result.status, "error");
  assert.match(String(second.toolResults[0].output), /vercel/);
  assert.equal(readFileSync(join(workdir, "ai.txt"), "utf8"), "vercel\n");
  // Two steps with calls: two rounds of the run, numbered by the handle.
  assert.equal(rt.run.number, 2);
  const r1 = await approver.getRound(roundWorkflowId(session, "ai", 1));
  assert.ok(isFinished(r1));
  assert.deepEqual(r1.results!.map((r) => r.call_id), ["c1", "e1", "m1"]);
  assert.equal(r1.results![1].approval?.decision, "approved");
  // The model's next step was given the round's tool messages.
  const prompt = JSON.stringify(model.doGenerateCalls[1].prompt);
  assert.match(prompt, /42/);
});

test("streamText: calls that stream in apart are still one round", { skip }, async () => {
  const { approver, session } = live("ai-stream");
  const chunks = (...parts: unknown[]) => ({ stream: simulateReadableStream({ chunks: parts as never[], chunkDelayInMs: 150 }) });
  const model = new MockLanguageModelV3({
    doStream: [
      chunks(
        { type: "stream-start", warnings: [] },
        toolCall("c1", "calculate", { expression: "2+3" }),
        toolCall("c2", "calculate", { expression: "4*5" }),
        { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage },
      ),
      chunks(
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "25" },
        { type: "text-end", id: "t" },
        { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
      ),
    ],
  });
  // The calls arrive 150 ms apart, past the 50 ms window: only the
  // middleware keeps them together.
  const rt = roundTools(approver, session, "stream", SPECS, { provider: "claude-code", state: { fetched: ALL_TOOLS }, windowMs: 50 });
  const res = streamText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(4), prompt: "add" });
  assert.equal(await res.text, "25");
  const steps = await res.steps;
  assert.deepEqual(
    steps[0].toolResults.map((r) => [r.toolCallId, String(r.output).match(/\d+/)?.[0]]),
    [
      ["c1", "5"],
      ["c2", "20"],
    ],
  );
  assert.equal(rt.run.number, 1);
  const r1 = await approver.getRound(roundWorkflowId(session, "stream", 1));
  assert.ok(isFinished(r1));
  assert.deepEqual(r1.results!.map((r) => r.call_id), ["c1", "c2"]);
});

test("tools without the middleware gather a step's calls into one round", { skip }, async () => {
  const { approver, session } = live("ai-window");
  const model = new MockLanguageModelV3({
    doGenerate: [callsStep(toolCall("c1", "calculate", { expression: "1+1" }), toolCall("c2", "calculate", { expression: "2+2" })), textStep("ok")],
  });
  const rt = roundTools(approver, session, "window", SPECS, { provider: "claude-code", state: { fetched: ALL_TOOLS } });
  const res = await generateText({ model, tools: rt.tools, stopWhen: stepCountIs(3), prompt: "x" });
  assert.equal(res.text, "ok");
  assert.equal(rt.run.number, 1);
  const r1 = await approver.getRound(roundWorkflowId(session, "window", 1));
  assert.ok(isFinished(r1));
  assert.deepEqual(r1.results!.map((r) => r.call_id), ["c1", "c2"]);
});

test("a denied call is a tool error and does not run", { skip }, async () => {
  const { approver, session, workdir } = live("ai-deny");
  const model = new MockLanguageModelV3({ doGenerate: [callsStep(toolCall("e1", "edit_file", { path: "no-ai.txt", new_text: "x" })), textStep("ok")] });
  const rt = roundTools(approver, session, "deny", SPECS, {
    provider: "claude-code",
    state: { fetched: ALL_TOOLS },
    onApproval: () => ({ approve: false, reason: "no" }),
  });
  const res = await generateText({ model: rt.wrap(model), tools: rt.tools, stopWhen: stepCountIs(3), prompt: "write" });
  const err = res.steps[0].content.find((p) => p.type === "tool-error");
  assert.ok(err && err.type === "tool-error" && err.error instanceof RoundCallError);
  assert.equal(err.error.result.status, "skipped");
  assert.ok(!existsSync(join(workdir, "no-ai.txt")));
});

test("bad tool specs are refused", () => {
  assert.throws(() => roundTools({ run: () => ({}) } as never, "s", "r", [{ description: "no name" }]), /without a name/);
});
