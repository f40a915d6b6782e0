// A tool worker of its own for the AI SDK tools of ai-orders.ts, on
// TOOL_QUEUE (TOOLROUND_TASK_QUEUE and TEMPORAL_ADDRESS as serve reads
// them): the process ai-own.test.ts kills.
import { serveTools } from "../adapters/ai.js";
import { serving, tools } from "./ai-orders.js";

await serveTools(tools, { ...serving, taskQueue: process.env.TOOL_QUEUE ?? "" });
