// toolround/tools: a program's own functions as toolround tools, served by a
// tool worker of its own as Temporal activities (SPEC Y1, Y1a). It needs the
// optional peer dependencies @temporalio/worker, @temporalio/activity,
// @temporalio/client and zod 4; Node 20 or newer. `import "toolround"` alone
// imports none of them.
//
//   import { z } from "zod";
//   import { serve, tool } from "toolround/tools";
//
//   const weather = tool({
//     name: "weather", effect: "read_only", description: "Today's weather in a city.",
//     parameters: z.object({ city: z.string() }),
//     execute: async ({ city }) => `sunny in ${city}`,
//   });
//   await serve([weather], { taskQueue: "weather-tools" });
//
// The wire is described in the project's docs/your-own-tools.md.
export {
  BadEnvelope,
  KEYWORDS,
  NAME,
  RESULT_LIMIT,
  ToolError,
  call,
  canonicalJSON,
  contentOf,
  image,
  json,
  problemsOf,
  reconcile,
  schemaHash,
  text,
  tool,
  unsupportedKeywords,
  wireSize,
  type CallResult,
  type Declaration,
  type Effect,
  type Envelope,
  type Item,
  type ReconcileResult,
  type RunOptions,
  type Tool,
  type ToolContext,
  type ToolOptions,
} from "./core.js";
export { ANNOUNCE_UPDATE, CATALOG_WORKFLOW, ServeRefused, activities, activityFailure, announcement, catalogWorkflowId, serve, type Announcement, type ServeOptions } from "./serve.js";
export { ENV_TOOL_KEY, SecretsUnavailable, openCall, openSealed, queueKey, seal, withSecrets } from "./secrets.js";
