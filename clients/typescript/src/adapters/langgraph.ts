// A drop-in for LangGraph JS's ToolNode whose tool calls run as toolround
// rounds (SPEC X4).
//
// Each time the graph reaches the node, the tool calls of the last AI
// message run as one durable round of the run sessionId/runId (the run
// handle keeps its state and round number), with toolround's approvals:
// the round waits for a person (on the console, or `onApproval`) as any
// round does. The results come back as ToolMessages, one per call, in call
// order, with `status: "error"` for calls that did not run or failed and
// the round's result entry as `artifact`:
//
//   import { toolsCondition } from "@langchain/langgraph/prebuilt";
//   import { RoundToolNode } from "toolround/langgraph";
//   graph.addNode("tools", new RoundToolNode(client, "s1", "r1"))
//        .addConditionalEdges("agent", toolsCondition, ["tools", END]);
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";

import type { Client, OnApproval, OnWait, Run, RunOptions } from "../client.js";
import { isError, openaiCall, outcomes } from "./common.js";

export interface RoundToolNodeOptions extends RunOptions {
  onApproval?: OnApproval;
  onWait?: OnWait;
  /** The state's messages field, as for ToolNode (default `messages`). */
  messagesKey?: string;
  /** The node's name (default `tools`). */
  name?: string;
}

type NodeInput = BaseMessage[] | Record<string, unknown>;
type NodeOutput = ToolMessage[] | Record<string, ToolMessage[]>;

/** Runs the last AI message's tool calls as one round; takes the graph's
 * state (its `messagesKey` field) or a bare list of messages, as ToolNode. */
export class RoundToolNode extends RunnableLambda<NodeInput, NodeOutput> {
  /** The run handle: `number` is the last finished round, `state` the run state. */
  readonly runHandle: Run;
  readonly messagesKey: string;
  private readonly onApproval?: OnApproval;
  private readonly onWait?: OnWait;

  constructor(client: Client, sessionId: string, runId: string, options: RoundToolNodeOptions = {}) {
    const { onApproval, onWait, messagesKey, name, ...runOptions } = options;
    super({ func: (input: NodeInput) => this.invokeNode(input) });
    this.name = name ?? "tools";
    this.runHandle = client.run(sessionId, runId, runOptions);
    this.messagesKey = messagesKey ?? "messages";
    this.onApproval = onApproval;
    this.onWait = onWait;
  }

  private async invokeNode(input: NodeInput): Promise<NodeOutput> {
    const wrap = !Array.isArray(input);
    const messages = (wrap ? (input as Record<string, unknown>)[this.messagesKey] : input) as BaseMessage[] | undefined;
    if (!Array.isArray(messages)) throw new TypeError(`RoundToolNode: the state has no ${this.messagesKey} list`);
    const ai = [...messages].reverse().find((m) => AIMessage.isInstance(m)) as AIMessage | undefined;
    if (!ai || !ai.tool_calls?.length) throw new Error("RoundToolNode: the last AI message has no tool calls");
    const out = await this.toolMessages(ai);
    return wrap ? { [this.messagesKey]: out } : out;
  }

  /** Runs `ai`'s tool calls as the next round and returns their ToolMessages. */
  async toolMessages(ai: AIMessage): Promise<ToolMessage[]> {
    const tcs = (ai.tool_calls ?? []).map((tc, i) => ({ ...tc, id: tc.id || `call_${this.runHandle.number + 1}_${i}` }));
    const calls = tcs.map((tc) => openaiCall(tc.id, tc.name, tc.args));
    const content = typeof ai.content === "string" ? ai.content : "";
    const res = await this.runHandle.round({ role: "assistant", content, tool_calls: calls }, { onApproval: this.onApproval, onWait: this.onWait });
    const byId = outcomes(res);
    return tcs.map((tc) => {
      const got = byId.get(tc.id);
      return new ToolMessage({
        content: got?.content ?? "no result",
        tool_call_id: tc.id,
        name: tc.name,
        status: got && !isError(got.result) ? "success" : "error",
        artifact: got?.result,
      });
    });
  }
}
