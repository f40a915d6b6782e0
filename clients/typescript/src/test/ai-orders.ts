// An application's own AI SDK tools for ai-own.test.ts: the test serves
// them in its own process, and ai-own-worker.ts in a process of its own that
// the test kills. Marks go to the folder MARKS names when they are called.
import { appendFileSync } from "node:fs";
import { join } from "node:path";

import { tool } from "ai";
import { z } from "zod";

import type { ToolContext } from "../tools/index.js";
import type { OwnToolsServing } from "../adapters/ai.js";

function mark(name: string, line: string): void {
  appendFileSync(join(process.env.MARKS ?? ".", name), line + "\n");
}

const hold = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const tools = {
  ai_lookup_order: tool({
    description: "Look an order up by its id.",
    inputSchema: z.object({ id: z.string().describe("the order's id") }),
    execute: async ({ id }, { experimental_context }) => {
      const ctx = experimental_context as ToolContext;
      mark("lookup", id);
      // A "slow-" order holds its first attempt until the test kills the tool worker.
      if (id.startsWith("slow-") && ctx.attempt === 1) await hold(120_000);
      return { id, status: "shipped" };
    },
  }),
  ai_refund_order: tool({
    description: "Refund part of an order.",
    inputSchema: z.object({ id: z.string(), amount: z.number().int() }),
    execute: async ({ id, amount }, { experimental_context }) => {
      const ctx = experimental_context as ToolContext;
      mark("refund", ctx.operationId);
      // A "hold-" order holds until the test kills the tool worker.
      if (id.startsWith("hold-")) await hold(120_000);
      return `refunded ${amount} on ${id}, key ${ctx.operationId}`;
    },
  }),
};

// How the adapter serves them (the same in every tool worker of the queue).
export const serving: OwnToolsServing = {
  readOnly: ["ai_lookup_order"],
  toolOptions: { ai_lookup_order: { heartbeat: 3 }, ai_refund_order: { heartbeat: 3 } },
};
