// An application's own LangChain tools for lg-own.test.ts: the test serves
// them in its own process, and lg-own-worker.ts in a process of its own that
// the test kills. Marks go to the folder MARKS names when they are called.
import { appendFileSync } from "node:fs";
import { join } from "node:path";

import { tool } from "@langchain/core/tools";
import { z } from "zod";

import { ToolError, type ToolContext } from "../tools/index.js";
import type { OwnToolsServing } from "../adapters/langgraph.js";

function mark(name: string, line: string): void {
  appendFileSync(join(process.env.MARKS ?? ".", name), line + "\n");
}

const hold = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Config = { configurable?: { toolround?: ToolContext } };

export const lookupOrder = tool(
  async ({ id }, config: Config) => {
    const ctx = config.configurable!.toolround!;
    mark("lookup", id);
    if (id.startsWith("none-")) throw new ToolError(`no order ${id}`, "no_order");
    // A "slow-" order holds its first attempt until the test kills the tool worker.
    if (id.startsWith("slow-") && ctx.attempt === 1) await hold(120_000);
    return { id, status: "shipped" };
  },
  { name: "lgjs_lookup_order", description: "Look an order up by its id.", schema: z.object({ id: z.string().describe("the order's id") }) },
);

export const refundOrder = tool(
  async ({ id, amount }, config: Config) => {
    const op = config.configurable!.toolround!.operationId;
    mark("refund", op);
    // A "hold-" order holds until the test kills the tool worker.
    if (id.startsWith("hold-")) await hold(120_000);
    return `refunded ${amount} on ${id}, key ${op}`;
  },
  { name: "lgjs_refund_order", description: "Refund part of an order.", schema: z.object({ id: z.string(), amount: z.number().int() }) },
);

export const cancelOrder = tool(
  async ({ id }) => {
    mark("cancel", id);
    return `cancelled ${id}`;
  },
  { name: "lgjs_cancel_order", description: "Cancel an order.", schema: z.object({ id: z.string() }) },
);

export const tools = [lookupOrder, refundOrder, cancelOrder];

// How the adapter serves them (the same in every tool worker of the queue).
export const serving: OwnToolsServing = {
  readOnly: ["lgjs_lookup_order"],
  toolOptions: { lgjs_lookup_order: { heartbeat: 3 }, lgjs_refund_order: { heartbeat: 3 }, lgjs_cancel_order: { heartbeat: 3 } },
};
