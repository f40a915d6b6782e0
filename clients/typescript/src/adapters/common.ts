// What the adapters share: calls to a round, results back.
import type { CallResult, Message, RoundResult, Status, ToolCall } from "../api-types.js";

/** The statuses of a call that did not do what it was asked (SPEC F2's
 * is_error list). */
export const ERROR_STATUSES: ReadonlySet<Status> = new Set<Status>([
  "error",
  "invalid",
  "unknown",
  "refused",
  "unknown_outcome",
  "cancelled",
  "expired",
  "skipped",
  "schema",
]);

/** A chat-completions tool call, as a round input holds it. */
export function openaiCall(callId: string, name: string, args: unknown): ToolCall {
  const text = typeof args === "string" ? args : JSON.stringify(args ?? {});
  return { id: callId, type: "function", function: { name, arguments: text } };
}

export interface CallOutcome {
  /** The call's tool message content: what the model reads. */
  content: string;
  /** The call's entry in the round's results. */
  result: CallResult;
}

/** Per call id: its tool message content and its result entry. */
export function outcomes(res: RoundResult): Map<string, CallOutcome> {
  const msgs = new Map<string, string>();
  // The adapters submit openai rounds, so the messages are tool messages.
  for (const m of (res.messages ?? []) as Message[]) {
    if (typeof m.tool_call_id === "string") msgs.set(m.tool_call_id, typeof m.content === "string" ? m.content : "");
  }
  const out = new Map<string, CallOutcome>();
  for (const r of res.results ?? []) {
    out.set(r.call_id, { content: msgs.get(r.call_id) ?? r.content ?? "", result: r });
  }
  return out;
}

export function isError(r: CallResult): boolean {
  return ERROR_STATUSES.has(r.status);
}

/** A tool spec as `starter tools --provider P` prints it
 * (`{type: "function", function: {...}}`) or the bare function object. */
export interface ToolSpecLike {
  type?: string;
  function?: { name: string; description?: string; parameters?: Record<string, unknown> };
  name?: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export function functionOf(spec: ToolSpecLike): { name: string; description: string; parameters: Record<string, unknown> } {
  const fn = spec.function ?? spec;
  if (!fn || typeof fn.name !== "string" || !fn.name) throw new TypeError(`a tool spec without a name: ${JSON.stringify(spec)}`);
  return {
    name: fn.name,
    description: fn.description ?? "",
    parameters: fn.parameters ?? { type: "object", properties: {} },
  };
}
