// toolround/tools without a server: schemas from zod, the schema hash, the
// envelope in and the result out, every error path, heartbeats and the
// cancel's AbortSignal (SPEC Y1, Y1a).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { ApplicationFailure, CancelledFailure } from "@temporalio/activity";
import { z } from "zod";

import {
  BadEnvelope,
  RESULT_LIMIT,
  ServeRefused,
  activityFailure,
  ToolError,
  call,
  canonicalJSON,
  image,
  json,
  problemsOf,
  reconcile,
  schemaHash,
  serve,
  text,
  tool,
  wireSize,
  type Tool,
  type ToolContext,
} from "../tools/index.js";

const HERE = dirname(fileURLToPath(import.meta.url));

function envelope(t: Tool, args: unknown = {}, o: { argsJson?: string; schemaHash?: string; operationId?: string; attempt?: number } = {}) {
  return {
    v: 1,
    tool: t.name,
    args_json: o.argsJson ?? JSON.stringify(args),
    operation_id: o.operationId ?? "",
    call_id: "c1",
    workflow_id: "round/s1/r1/1",
    schema_hash: o.schemaHash ?? t.schemaHash,
    attempt: o.attempt ?? 1,
  };
}

const search = tool({
  name: "search",
  effect: "read_only",
  subject: "q",
  description: "Search the notes.",
  parameters: z.object({
    q: z.string(),
    limit: z.number().int().default(10),
    place: z.object({ city: z.string(), country: z.string().default("FR") }).optional(),
  }),
  execute: ({ q, limit, place }, ctx) => ({ q, limit, place, call_id: ctx.callId }),
});

// --- schemas ------------------------------------------------------------------

test("the schema comes from the zod schema, as its input", () => {
  const s = search.parameters as { type: string; properties: Record<string, Record<string, unknown>>; required: string[] };
  assert.equal(s.type, "object");
  assert.deepEqual(Object.keys(s.properties), ["q", "limit", "place"]);
  assert.deepEqual(s.properties.q, { type: "string" });
  assert.equal(s.properties.limit.default, 10);
  assert.equal(s.properties.limit.type, "integer");
  assert.deepEqual(s.required, ["q"], "a parameter with a default is optional");
  assert.equal("$schema" in s, false);
  assert.equal(search.description, "Search the notes.");
  assert.deepEqual(search.problems, []);
});

test("the announcement has every field of the wire", () => {
  assert.deepEqual(search.announcement(), {
    name: "search",
    description: "Search the notes.",
    parameters: search.parameters,
    effect: "read_only",
    concurrent: false,
    cache_seconds: 0,
    subject: "q",
    timeout_seconds: 60,
    schedule_to_start_seconds: 300,
    heartbeat_seconds: 20,
    reconcile: false,
    schema_hash: schemaHash(search.parameters),
  });
  const t = tool({
    name: "put",
    effect: "side_effect",
    concurrent: true,
    timeout: 30,
    scheduleToStart: 10,
    heartbeat: 6,
    reconcile: () => true,
    parameters: z.object({ key: z.string() }).describe("Put a key."),
    execute: () => null,
  });
  const a = t.announcement();
  assert.equal(a.description, "Put a key.", "the schema's description when none is given");
  assert.deepEqual([a.concurrent, a.timeout_seconds, a.schedule_to_start_seconds, a.heartbeat_seconds, a.reconcile], [true, 30, 10, 6, true]);
});

test("the problems: a bad name, a keyword the validator does not enforce, a bad subject, duplicates, bad times", () => {
  const noop = () => null;
  const a = tool({ name: "Bad-Name", effect: "read_only", parameters: z.object({ q: z.string() }), execute: noop });
  const b = tool({ name: "b", effect: "read_only", parameters: z.object({ p: z.tuple([z.string(), z.number()]) }), execute: noop });
  const c = tool({ name: "c", effect: "maybe" as "read_only", subject: "n", reconcile: () => true, parameters: z.object({ n: z.number() }), execute: noop });
  const c2 = tool({ name: "c", effect: "read_only", parameters: z.object({ n: z.number() }), execute: noop });
  const d = tool({ name: "d", effect: "read_only", parameters: z.object({ when: z.date() }), execute: noop });
  const e = tool({ name: "e", effect: "side_effect", timeout: 0, heartbeat: 1.5, cacheSeconds: 5, parameters: z.object({}), execute: noop });
  const f = tool({ name: "f", effect: "read_only", parameters: z.string() as unknown as z.ZodObject, execute: noop });
  const g = tool({ name: "x".repeat(65), effect: "read_only", subject: "nope", parameters: z.object({}), execute: noop });
  const lines = problemsOf([a, b, c, c2, d, e, f, g]);
  const all = lines.join("\n");
  const want = [
    'tool Bad-Name: the name "Bad-Name" does not match [a-z][a-z0-9_]{0,63}',
    "tool b: its schema has a keyword the validator does not enforce (#/properties/p: prefixItems)",
    'tool c: effect is "maybe"; it is "read_only" or "side_effect"',
    "tool c: reconcile is for side-effecting tools",
    'tool c: subject "n" is not a string parameter',
    "tool c: the name is used twice",
    "tool d: no JSON schema for its parameters: Date cannot be represented in JSON Schema",
    "tool e: timeout is 0; it is a whole number of seconds above 0",
    "tool e: heartbeat is 1.5; it is a whole number of seconds above 0",
    "tool e: cacheSeconds is for read-only tools",
    'tool f: its parameters are not an object schema (z.object({...})) but "string"',
    `tool ${"x".repeat(65)}: the name`,
    `tool ${"x".repeat(65)}: subject "nope" is not one of its parameters`,
  ];
  for (const w of want) assert.ok(all.includes(w), `missing ${JSON.stringify(w)} in\n${all}`);
  assert.equal(lines.length, want.length, all);
  assert.deepEqual(problemsOf([{} as Tool]), ["[object Object] is not a tool made with tool({...})"]);
  const h = tool({ name: "h", effect: "read_only", parameters: { type: "object" } as unknown as z.ZodObject, execute: noop });
  assert.deepEqual(h.problems, ["tool h: parameters is not a zod 4 schema (z.object({...}))"]);
});

test("the keyword allowlist is the wire's: $defs and $ref pass, others are named where they are", () => {
  const node: z.ZodType = z.lazy(() => z.object({ name: z.string(), kids: z.array(node) }));
  const t = tool({ name: "tree", effect: "read_only", parameters: z.object({ root: node }), execute: () => null });
  assert.deepEqual(t.problems, []);
  assert.ok(JSON.stringify(t.parameters).includes('"$ref":"#'));
  const r = tool({
    name: "r",
    effect: "read_only",
    parameters: z.object({ n: z.number().multipleOf(3), s: z.string().regex(/^a/), m: z.record(z.string(), z.number()) }),
    execute: () => null,
  });
  assert.deepEqual(r.problems, [], "multipleOf, pattern, propertyNames and additionalProperties are enforced");
});

test("the schema hash is sha256 of the canonical JSON (the wire's test vector)", () => {
  const s = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
  assert.equal(canonicalJSON(s), '{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}');
  assert.equal(schemaHash(s), "sha256:f6a7df916a5c0aba8b22d0dde009dcffc865c224d2a63a728c2792e2662b5a1e");
  assert.equal(schemaHash({ required: ["q"], properties: { q: { type: "string" } }, type: "object" }), schemaHash(s), "key order does not matter");
  assert.equal(canonicalJSON({ d: "café <&>", a: [{ z: 1, b: 2 }] }), '{"a":[{"b":2,"z":1}],"d":"café <&>"}', "UTF-8, nothing escaped");
  assert.equal(search.schemaHash, schemaHash(search.parameters));
});

test("the base package does not import temporalio or zod", () => {
  // Every module dist/index.js imports, followed through relative imports.
  const dist = join(HERE, "..");
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(/^\s*(?:import|export)\b[^;]*?from\s*"([^"]+)"|import\(\s*"([^"]+)"\s*\)/gm)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith(".")) visit(join(dirname(file), spec));
      else bare.add(spec);
    }
  };
  visit(join(dist, "index.js"));
  assert.ok(seen.size > 1, [...seen].join(", "));
  assert.deepEqual([...bare].filter((s) => s.startsWith("@temporalio") || s === "zod" || s.startsWith("zod/")), []);
  // And toolround/tools does import them.
  seen.clear();
  bare.clear();
  visit(join(dist, "tools", "index.js"));
  for (const m of ["@temporalio/activity", "@temporalio/client", "@temporalio/worker", "zod"]) assert.ok(bare.has(m), m);
});

// --- one call: the envelope in, the result out ---------------------------------

test("a call maps the envelope to the arguments and the context", async () => {
  const out = await call(search, envelope(search, { q: "tea", place: { city: "Lyon" } }));
  assert.deepEqual(out, {
    v: 1,
    is_error: false,
    content: [{ type: "json", json: { q: "tea", limit: 10, place: { city: "Lyon", country: "FR" }, call_id: "c1" } }],
  });
  let seen: ToolContext | undefined;
  const pay = tool({
    name: "pay",
    effect: "side_effect",
    parameters: z.object({ amount: z.number() }),
    execute: async (_a, ctx) => {
      seen = ctx;
    },
  });
  assert.deepEqual(await call(pay, envelope(pay, { amount: 3 }, { operationId: "op-1", attempt: 2 })), { v: 1, content: [], is_error: false });
  assert.equal(seen?.operationId, "op-1");
  assert.equal(seen?.attempt, 2);
  assert.equal(seen?.tool, "pay");
  assert.equal(seen?.callId, "c1");
  assert.equal(seen?.workflowId, "round/s1/r1/1");
  assert.equal(seen?.schemaHash, pay.schemaHash);
  assert.equal(seen?.signal.aborted, false);
});

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
const cases: [string, unknown, unknown[]][] = [
  ["a string", "hi", [{ type: "text", text: "hi" }]],
  ["undefined", undefined, []],
  ["null", null, []],
  ["an object", { a: [1, 2.5, true, null] }, [{ type: "json", json: { a: [1, 2.5, true, null] } }]],
  ["an array", [1, 2], [{ type: "json", json: [1, 2] }]],
  ["a number", 7, [{ type: "json", json: 7 }]],
  ["false", false, [{ type: "json", json: false }]],
  ["a Date, by its toJSON", { at: new Date(0) }, [{ type: "json", json: { at: "1970-01-01T00:00:00.000Z" } }]],
  ["text()", text("t"), [{ type: "text", text: "t" }]],
  [
    "a list of items",
    [text("t"), json({ k: 1 }), image(png, "image/png")],
    [
      { type: "text", text: "t" },
      { type: "json", json: { k: 1 } },
      { type: "image", data: "iVBORw==", mime_type: "image/png" },
    ],
  ],
];
for (const [what, value, content] of cases) {
  test(`a return value maps to content: ${what}`, async () => {
    const f = tool({ name: "f", effect: "read_only", parameters: z.object({}), execute: () => value });
    assert.deepEqual(await call(f, envelope(f)), { v: 1, content, is_error: false });
  });
}

function calledTool() {
  const calls: string[] = [];
  const f = tool({
    name: "f",
    effect: "read_only",
    parameters: z.strictObject({ q: z.string(), n: z.number().int().default(1) }),
    execute: ({ q }) => {
      calls.push(q);
      return q;
    },
  });
  return { f, calls };
}

test("schema_changed: a call checked against another schema is refused before the function runs", async () => {
  const { f, calls } = calledTool();
  for (const hash of ["sha256:old", ""]) {
    const out = await call(f, envelope(f, { q: "x" }, { schemaHash: hash }));
    assert.equal(out.is_error, true);
    assert.equal(out.error_code, "schema_changed");
    assert.match((out.content[0] as { text: string }).text, /the schema of f has changed/);
  }
  assert.deepEqual(calls, []);
});

const invalid: [string, string][] = [
  ['{"n": 2}', "q: Invalid input: expected string, received undefined"],
  ['{"q": "x", "n": "many"}', "n: Invalid input: expected number, received string"],
  ['{"q": "x", "extra": 1}', 'Unrecognized key: "extra"'],
  ['{"q": ', "the arguments are not JSON"],
  ['["x"]', "the arguments are not a JSON object"],
];
for (const [argsJson, message] of invalid) {
  test(`invalid_arguments without a call: ${argsJson}`, async () => {
    const { f, calls } = calledTool();
    const out = await call(f, envelope(f, undefined, { argsJson }));
    assert.equal(out.is_error, true);
    assert.equal(out.error_code, "invalid_arguments");
    assert.ok((out.content[0] as { text: string }).text.includes(message), JSON.stringify(out));
    assert.deepEqual(calls, []);
  });
}

test("a bad envelope is a BadEnvelope error, not a result", async () => {
  const { f, calls } = calledTool();
  await assert.rejects(call(f, { ...envelope(f, { q: "x" }), v: 2 }), { name: "BadEnvelope", message: "f: the input is not a version 1 envelope" });
  await assert.rejects(call(f, { ...envelope(f, { q: "x" }), tool: "g" }), { name: "BadEnvelope", message: 'f: the envelope is for tool "g"' });
  assert.deepEqual(calls, []);
});

test("a ToolError is an error result with its code, tool_error by default", async () => {
  const f = tool({
    name: "f",
    effect: "read_only",
    parameters: z.object({ code: z.string() }),
    execute: ({ code }) => {
      throw new ToolError("no such city", code || undefined);
    },
  });
  assert.deepEqual(await call(f, envelope(f, { code: "" })), {
    v: 1,
    is_error: true,
    error_code: "tool_error",
    content: [{ type: "text", text: "no such city" }],
  });
  assert.equal((await call(f, envelope(f, { code: "not_found" }))).error_code, "not_found");
});

test("any other exception is thrown, for serve to fail the activity with its class name", async () => {
  class QuotaExceeded extends Error {}
  const f = tool({
    name: "f",
    effect: "read_only",
    parameters: z.object({}),
    execute: async () => {
      throw new QuotaExceeded("try later");
    },
  });
  await assert.rejects(call(f, envelope(f)), (e: unknown) => e instanceof QuotaExceeded && e.message === "try later");
});

const bad: [string, unknown, string][] = [
  ["bytes", new Uint8Array([1]), "Uint8Array"],
  ["a Buffer", Buffer.from("raw"), "Buffer"],
  ["a Map", { m: new Map() }, "Map"],
  ["a Set", new Set([1]), "Set"],
  ["NaN", { n: NaN }, "NaN"],
  ["a bigint", { n: 1n }, "bigint"],
  ["a function", () => 1, "function"],
];
for (const [what, value, named] of bad) {
  test(`a result that is not JSON is bad_result: ${what}`, async () => {
    const f = tool({ name: "f", effect: "read_only", parameters: z.object({}), execute: () => value });
    const out = await call(f, envelope(f));
    assert.equal(out.is_error, true);
    assert.equal(out.error_code, "bad_result");
    assert.ok((out.content[0] as { text: string }).text.includes(named), JSON.stringify(out));
  });
}

test("a result that refers to itself is bad_result", async () => {
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  const f = tool({ name: "f", effect: "read_only", parameters: z.object({}), execute: () => loop });
  const out = await call(f, envelope(f));
  assert.equal(out.error_code, "bad_result");
  assert.match((out.content[0] as { text: string }).text, /refers to itself/);
});

test("a result above 1 MiB is result_too_large, counted as UTF-8 JSON", async () => {
  const f = tool({ name: "f", effect: "read_only", parameters: z.object({ n: z.number(), c: z.string() }), execute: ({ n, c }) => c.repeat(n) });
  const ok = await call(f, envelope(f, { n: RESULT_LIMIT - 200, c: "x" }));
  assert.equal(ok.is_error, false);
  assert.ok(wireSize(ok) <= RESULT_LIMIT);
  const out = await call(f, envelope(f, { n: RESULT_LIMIT, c: "x" }));
  assert.equal(out.error_code, "result_too_large");
  assert.match((out.content[0] as { text: string }).text, /more than the limit of 1048576 bytes/);
  // "é" is two bytes of UTF-8, as the Temporal SDK's json/plain converter writes it.
  assert.equal((await call(f, envelope(f, { n: RESULT_LIMIT / 2, c: "é" }))).error_code, "result_too_large");
  assert.equal((await call(f, envelope(f, { n: RESULT_LIMIT / 2 - 100, c: "é" }))).is_error, false);
});

test("reconcile maps true, false and null", async () => {
  const answers: Record<string, boolean | null> = { a: true, b: false, c: null };
  const put = tool({
    name: "put",
    effect: "side_effect",
    parameters: z.object({ key: z.string() }),
    reconcile: ({ key }, ctx) => {
      assert.equal(ctx.operationId, "op-9");
      return answers[key];
    },
    execute: ({ key }) => key,
  });
  assert.equal(put.announcement().reconcile, true);
  for (const [key, want] of Object.entries(answers)) {
    assert.deepEqual(await reconcile(put, envelope(put, { key }, { operationId: "op-9" })), { v: 1, took_effect: want, content: [] });
  }
  const odd = tool({ name: "odd", effect: "side_effect", parameters: z.object({}), reconcile: () => "yes", execute: () => null });
  const out = await reconcile(odd, envelope(odd));
  assert.equal(out.took_effect, null);
  assert.match((out.content[0] as { text: string }).text, /returned string, not true, false or null/);
});

test("heartbeats come at once and then every interval while the function runs", async () => {
  const beats: number[] = [];
  const slow = tool({
    name: "slow",
    effect: "read_only",
    parameters: z.object({}),
    execute: () => new Promise((resolve) => setTimeout(() => resolve("done"), 500)),
  });
  const out = await call(slow, envelope(slow), { heartbeat: () => beats.push(Date.now()), intervalMs: 100 });
  assert.deepEqual(out.content, [{ type: "text", text: "done" }]);
  assert.ok(beats.length >= 4, `${beats.length} heartbeats`);
  const n = beats.length;
  await new Promise((r) => setTimeout(r, 250));
  assert.equal(beats.length, n, "no heartbeat after the call");
});

test("a cancel aborts ctx.signal and ends the call with the signal's reason at once", async () => {
  const ac = new AbortController();
  let seen: AbortSignal | undefined;
  const wait = tool({
    name: "wait",
    effect: "read_only",
    parameters: z.object({}),
    execute: (_a, ctx) => {
      seen = ctx.signal;
      ac.abort(new CancelledFailure("CANCELLED"));
      return new Promise(() => undefined); // never settles by itself
    },
  });
  await assert.rejects(call(wait, envelope(wait), { signal: ac.signal }), (e: unknown) => e instanceof CancelledFailure);
  assert.equal(seen?.aborted, true);
});

test("a ToolError thrown because of the cancel still ends the call cancelled", async () => {
  const ac = new AbortController();
  const wait = tool({
    name: "wait",
    effect: "read_only",
    parameters: z.object({}),
    execute: async (_a, ctx) => {
      ac.abort(new CancelledFailure("CANCELLED"));
      if (ctx.signal.aborted) throw new ToolError("stopped");
    },
  });
  await assert.rejects(call(wait, envelope(wait), { signal: ac.signal }), (e: unknown) => e instanceof CancelledFailure);
});

test("serve refuses a tool with problems before connecting: one line each", async () => {
  const lines: string[] = [];
  const f = tool({ name: "F", effect: "read_only", parameters: z.object({}), execute: () => null });
  await assert.rejects(
    serve([f, f], { taskQueue: "q", address: "127.0.0.1:1", exitOnRefusal: false, log: (l) => lines.push(l) }),
    (e: unknown) => e instanceof ServeRefused && e.lines.length === 1,
  );
  assert.deepEqual(lines, ['toolround/tools: tool F: the name "F" does not match [a-z][a-z0-9_]{0,63}']);
  await assert.rejects(serve([], { taskQueue: "", exitOnRefusal: false, log: () => undefined }), {
    lines: ["the task queue is empty", "no tools to serve"],
  });
});

test("serve exits 2 on a refusal by default, with the line on stderr", () => {
  const script = `import { z } from "zod";
    import { serve, tool } from ${JSON.stringify(join(HERE, "..", "tools", "index.js"))};
    await serve([tool({ name: "x", effect: "read_only", parameters: z.object({ p: z.tuple([z.string()]) }), execute: () => 1 })], { taskQueue: "q" });`;
  try {
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", stdio: "pipe", cwd: join(HERE, "..", "..") });
    assert.fail("serve did not exit");
  } catch (e) {
    const err = e as { status: number; stderr: string };
    assert.equal(err.status, 2);
    assert.equal(err.stderr, "toolround/tools: tool x: its schema has a keyword the validator does not enforce (#/properties/p: prefixItems)\n");
  }
});

test("the activity failure of an exception: its class name, retryable; BadEnvelope is not; a cancel is a cancel", () => {
  class QuotaExceeded extends Error {}
  const live = new AbortController().signal;
  const f = activityFailure(new QuotaExceeded("try later"), live) as ApplicationFailure;
  assert.ok(f instanceof ApplicationFailure);
  assert.deepEqual([f.type, f.message, f.nonRetryable], ["QuotaExceeded", "try later", false]);
  const named = new Error("x");
  named.name = "TimeoutError";
  assert.equal((activityFailure(named, live) as ApplicationFailure).type, "TimeoutError");
  assert.deepEqual(
    [(activityFailure("plain", live) as ApplicationFailure).type, (activityFailure("plain", live) as ApplicationFailure).message],
    ["Error", "plain"],
  );
  const long = activityFailure(new Error("y".repeat(70_000)), live) as ApplicationFailure;
  assert.equal(long.message.length, (64 << 10) + "... (cut at 65536 characters)".length);
  const b = activityFailure(new BadEnvelope("f: the input is not a version 1 envelope"), live) as ApplicationFailure;
  assert.deepEqual([b.type, b.nonRetryable], ["BadEnvelope", true]);
  const ac = new AbortController();
  ac.abort();
  assert.ok(activityFailure(new Error("aborted"), ac.signal) instanceof CancelledFailure);
});

test("secrets sealed for the queue: the Go worker's queue key, seal and open, placeholders (Y3)", async () => {
  const { queueKey, seal, openSealed, openCall, SecretsUnavailable } = await import("../tools/index.js");
  const saved = { ...process.env };
  try {
    delete process.env.TOOLROUND_TOOL_KEY;
    process.env.TOOLROUND_SECRET_KEY = Buffer.alloc(32, 1).toString("base64");
    const key = queueKey("orders");
    assert.equal(key.toString("hex"), "ee83db82028700846772d02583cd28b4cffcbd96f5d8844ea2dcb8190d7ae674");
    const sealed = seal(key, "v-0123456789");
    assert.ok(sealed.startsWith("sealed:v1:") && !sealed.includes("v-0123456789"));
    assert.equal(openSealed(key, sealed), "v-0123456789");
    assert.throws(() => openSealed(Buffer.alloc(32), sealed), SecretsUnavailable);
    process.env.TOOLROUND_TOOL_KEY = key.toString("base64");
    const { envelope } = openCall({ v: 1, args_json: JSON.stringify({ a: ["x {{ secret:api }}", { b: "{{secret:other}}" }] }), secrets: { api: sealed } }, "orders");
    assert.deepEqual(JSON.parse(envelope.args_json as string), { a: ["x v-0123456789", { b: "{{secret:other}}" }] });
    assert.equal(envelope.secrets, undefined);
  } finally {
    process.env = saved;
  }
});
