// A TypeScript tool worker for tests/usertools_test.go's
// TestTypeScriptToolWorkerY1: serves a read-only lookup and a
// side-effecting refund on TOOL_QUEUE (TOOLROUND_TASK_QUEUE and
// TEMPORAL_ADDRESS as serve reads them) until SIGTERM.
import { createHash } from "node:crypto";

import { z } from "zod";

import { ToolError, serve, tool } from "../tools/index.js";

const lookup = tool({
  name: "ts_lookup_order",
  effect: "read_only",
  description: "Look an order up by its id.",
  parameters: z.object({ id: z.string() }),
  execute: ({ id }, ctx) => ({ id, status: "shipped", attempt: ctx.attempt }),
});

const refund = tool({
  name: "ts_refund_order",
  effect: "side_effect",
  description: "Refund an order.",
  timeout: 30,
  scheduleToStart: 5,
  heartbeat: 6,
  parameters: z.object({ id: z.string(), amount: z.number().int() }),
  execute: async ({ id, amount }, ctx) => {
    if (amount <= 0) throw new ToolError("a refund needs a positive amount");
    return `refunded ${id} as operation ${ctx.operationId}`;
  },
});

// same_echo is served in Go and Python too (TestTheSameCallInEveryLanguageY1a).
const sameEcho = tool({
  name: "same_echo",
  effect: "side_effect",
  description: "Repeat a text in capitals.",
  parameters: z.object({ text: z.string(), times: z.number().int() }),
  execute: ({ text, times }, ctx) => {
    if (text === "") throw new ToolError("there is no text to repeat", "empty_text");
    return { echo: text.toUpperCase().repeat(times), operation_id: ctx.operationId };
  },
});

// secret_echo is served in Go and Python too (TestUserToolSecretsY3).
const secretEcho = tool({
  name: "secret_echo",
  effect: "side_effect",
  description: "Echo a token back in several encodings.",
  parameters: z.object({ token: z.string(), note: z.string() }),
  execute: ({ token, note }) => {
    if (note === "fail") throw new ToolError("the server refused token " + token);
    if (note === "raise") throw new Error("the connection dropped while sending " + token);
    const raw = Buffer.from(token, "utf8");
    return { echo: token, b64: raw.toString("base64"), hex: raw.toString("hex"), sha256: createHash("sha256").update(raw).digest("hex"), note };
  },
});

const queue = process.env.TOOL_QUEUE;
if (!queue) {
  process.stderr.write("TOOL_QUEUE is not set\n");
  process.exit(2);
}
await serve([lookup, refund, sameEcho, secretEcho], { taskQueue: queue });
process.stderr.write("tool worker stopped\n");
