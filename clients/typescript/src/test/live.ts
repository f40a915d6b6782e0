// The tests run against a real console and worker: TOOLROUND_URL,
// TOOLROUND_APPROVER_TOKEN, TOOLROUND_AGENT_TOKEN, TOOLROUND_SESSION (a
// session id prefix of their own) and TOOLROUND_WORKDIR (the worker's
// TOOLS_WORKDIR). tests/typescript_test.go starts both and runs `node --test`
// with them; without them the live tests skip, or fail under CI=true.
import { Client, type RoundInput, type ToolCall } from "../index.js";

const names = ["TOOLROUND_URL", "TOOLROUND_APPROVER_TOKEN", "TOOLROUND_AGENT_TOKEN", "TOOLROUND_SESSION", "TOOLROUND_WORKDIR"];
const missing = names.filter((n) => !process.env[n]);

/** The node:test option that skips a live test without the variables
 * (false under CI=true, where the test then fails in `live()`). */
export const skip: string | false =
  missing.length && process.env.CI !== "true" ? `${missing.join(", ")} not set (tests/typescript_test.go sets them)` : false;

let counter = 0;

export interface Live {
  url: string;
  approver: Client;
  agent: Client;
  workdir: string;
  /** A session id of this test's own. */
  session: string;
}

export function live(name: string): Live {
  if (missing.length) {
    throw new Error(`${missing.join(", ")} not set: run these tests through \`go test -run TestTypeScript ./tests/\``);
  }
  const env = process.env as Record<string, string>;
  const slug = name.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 40).replace(/^-+|-+$/g, "");
  return {
    url: env.TOOLROUND_URL,
    approver: new Client(env.TOOLROUND_URL, env.TOOLROUND_APPROVER_TOKEN, { timeoutMs: 30_000 }),
    agent: new Client(env.TOOLROUND_URL, env.TOOLROUND_AGENT_TOKEN, { timeoutMs: 30_000 }),
    workdir: env.TOOLROUND_WORKDIR,
    session: `${env.TOOLROUND_SESSION}-${slug}-${++counter}`,
  };
}

export const ALL_TOOLS = ["calculate", "edit_file", "read_files", "run_command"];

export function call(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
}

export function roundInput(session: string, n: number, calls: ToolCall[], run = "r1"): RoundInput {
  return {
    session_id: session,
    run_id: run,
    round: n,
    provider: "claude-code",
    assistant: { role: "assistant", content: "", tool_calls: calls },
    state: { fetched: ALL_TOOLS },
  };
}
