// One process of langgraph.test.ts's restart test: it builds the graph with
// a checkpointer kept in a file and either starts the thread (`start`) or
// resumes it with a decision (`resume approve|deny`), prints what the graph
// returned as one JSON line, and exits. Its environment: TOOLROUND_URL,
// TOOLROUND_APPROVER_TOKEN, SESSION, RUN, CHECKPOINTS (the file); with
// OWN_TOOL_QUEUE, the calls are of the app's own tools of lg-orders.ts
// (marks in MARKS), served by a tool worker the node starts in each process
// (lg-own.test.ts).
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, type Checkpoint, type CheckpointMetadata } from "@langchain/langgraph";
import { toolsCondition } from "@langchain/langgraph/prebuilt";

import { Client } from "../index.js";
import { RoundToolNode } from "../adapters/langgraph.js";
import { serving, tools } from "./lg-orders.js";

// MemorySaver whose storage is written to a file after each change and read
// back by the next process: LangGraph JS's checkpointers that persist need a
// database or a native module.
class FileSaver extends MemorySaver {
  constructor(private readonly file: string) {
    super();
    if (existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, "utf8"), (_k, v) => (v && typeof v === "object" && typeof v.$bytes === "string" ? new Uint8Array(Buffer.from(v.$bytes, "base64")) : v));
      this.storage = saved.storage;
      this.writes = saved.writes;
    }
  }

  private save(): void {
    const text = JSON.stringify({ storage: this.storage, writes: this.writes }, (_k, v) => (v instanceof Uint8Array ? { $bytes: Buffer.from(v).toString("base64") } : v));
    writeFileSync(this.file + ".tmp", text);
    renameSync(this.file + ".tmp", this.file);
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const out = await super.put(config, checkpoint, metadata);
    this.save();
    return out;
  }

  override async putWrites(...args: Parameters<MemorySaver["putWrites"]>): Promise<void> {
    await super.putWrites(...args);
    this.save();
  }
}

const env = process.env as Record<string, string>;
const [phase, decision] = process.argv.slice(2);
const own = env.OWN_TOOL_QUEUE;
// The model answers with the calls in the first process and with its last
// words after a resume: a graph that started over instead of resuming would
// run the calls' turn again with the wrong message.
const turn =
  phase !== "start"
    ? new AIMessageChunk({ content: "all done" })
    : own
      ? new AIMessageChunk({
          content: "",
          tool_calls: [
            { id: "l1", name: "lgjs_lookup_order", args: { id: "R-1" } },
            { id: "k1", name: "lgjs_cancel_order", args: { id: "R-1" } },
            { id: "k2", name: "lgjs_cancel_order", args: { id: "R-2" } },
          ],
        })
      : new AIMessageChunk({
          content: "",
          tool_calls: [
            { id: "c1", name: "calculate", args: { expression: "6*7" } },
            { id: "e1", name: "edit_file", args: { path: "lg-ts-restart-a.txt", new_text: "a\n" } },
            { id: "e2", name: "edit_file", args: { path: "lg-ts-restart-b.txt", new_text: "b\n" } },
          ],
        });
const agent = async (s: { messages: BaseMessage[] }) => {
  const model = new FakeStreamingChatModel({ responses: [new AIMessage(String(turn.content))], chunks: [turn] });
  return { messages: [await model.invoke(s.messages)] };
};
const client = new Client(env.TOOLROUND_URL, env.TOOLROUND_APPROVER_TOKEN, { timeoutMs: 30_000 });
const node = new RoundToolNode(client, env.SESSION, env.RUN, {
  provider: "claude-code",
  state: { fetched: ["calculate", "edit_file", "read_files"] },
  pollMs: 500,
  ...(own ? { ...serving, tools, taskQueue: own } : {}),
});
const app = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addNode("tools", node)
  .addEdge(START, "agent")
  .addConditionalEdges("agent", toolsCondition, ["tools", END])
  .addEdge("tools", "agent")
  .compile({ checkpointer: new FileSaver(env.CHECKPOINTS) });
const config = { configurable: { thread_id: "restart" } };
const out =
  phase === "start"
    ? await app.invoke({ messages: [new HumanMessage("compute and write")] }, config)
    : await app.invoke(new Command({ resume: { approve: decision === "approve", reason: `from process ${process.pid}` } }), config);
const msgs = out.messages as BaseMessage[];
console.log(
  JSON.stringify({
    interrupts: ((out as { __interrupt__?: { value: unknown }[] }).__interrupt__ ?? []).map((i) => i.value),
    tools: msgs.filter((m): m is ToolMessage => ToolMessage.isInstance(m)).map((m) => ({ id: m.tool_call_id, status: m.status, content: m.content, result: m.artifact })),
    last: msgs[msgs.length - 1].content,
    round: node.runHandle.number,
  }),
);
await node.close(); // stops this process's tool worker, if any
