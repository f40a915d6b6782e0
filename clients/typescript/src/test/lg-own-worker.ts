// A tool worker of its own for the LangChain tools of lg-orders.ts, on
// TOOL_QUEUE (TOOLROUND_TASK_QUEUE and TEMPORAL_ADDRESS as serve reads
// them): the process lg-own.test.ts kills.
import { serveTools } from "../adapters/langgraph.js";
import { serving, tools } from "./lg-orders.js";

await serveTools(tools, { ...serving, taskQueue: process.env.TOOL_QUEUE ?? "" });
