// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk from
// npm) against the MCP gateway, driven by tests/mcpgateway_clients_test.go
// (Z5) with the commands of ../gateway_client.py, one JSON object a line on
// stdin, each answered by one JSON line on stdout that carries its tag. The
// endpoint is GATEWAY_URL, the bearer token GATEWAY_TOKEN.
import readline from "node:readline";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.env.GATEWAY_URL);
const token = process.env.GATEWAY_TOKEN;

// A call may wait minutes for a person: the SDK's default of 60 s per
// request would give up on it.
const callTimeout = 10 * 60 * 1000;

const say = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");
const why = (err) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

const clients = new Map(); // name -> { client, calls: Set<AbortController> }

async function connect(name) {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: `gateway-test-typescript-${name}`, version: "1" });
  await client.connect(transport);
  clients.set(name, { client, calls: new Set() });
  return transport.protocolVersion ?? null;
}

async function call(tag, c, name, args) {
  const abort = new AbortController();
  c.calls.add(abort);
  try {
    const result = await c.client.callTool({ name, arguments: args }, undefined, {
      signal: abort.signal,
      timeout: callTimeout,
    });
    say({ tag, result });
  } catch (err) {
    say({ tag, error: abort.signal.aborted ? "cancelled" : why(err) });
  } finally {
    c.calls.delete(abort);
  }
}

async function drop(name) {
  const c = clients.get(name);
  clients.delete(name);
  for (const abort of c.calls) abort.abort();
  await c.client.close();
}

async function handle(cmd) {
  const { op, tag } = cmd;
  try {
    switch (op) {
      case "connect":
        say({ tag, ok: true, protocol: await connect(cmd.client) });
        break;
      case "list": {
        const res = await clients.get(cmd.client).client.listTools();
        say({ tag, tools: res.tools });
        break;
      }
      case "call":
        // Answered when it returns; other commands go on meanwhile.
        void call(tag, clients.get(cmd.client), cmd.name, cmd.arguments ?? {});
        break;
      case "drop":
        await drop(cmd.client);
        say({ tag, ok: true });
        break;
      default:
        throw new Error(`unknown op ${op}`);
    }
  } catch (err) {
    say({ tag, error: why(err) });
  }
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const cmd = JSON.parse(line);
  if (cmd.op === "quit") break;
  await handle(cmd);
}
for (const name of [...clients.keys()]) await drop(name);
process.exit(0);
