// toolround: the client of the console's HTTP API (SPEC X3).
//
//   import { Client } from "toolround";
//   const c = new Client("http://127.0.0.1:8780", token);
//   const result = await c.runRound(input, { onApproval: () => true });
export * from "./client.js";
export type * from "./api-types.js";
export { operations } from "./api-types.js";
export type { OperationId, ErrorCode } from "./api-types.js";
