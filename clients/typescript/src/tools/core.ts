// Declaring tools and running one call of a tool (SPEC Y1, Y1a): the JSON
// schema from the tool's zod schema, the schema hash, the envelope in and
// the result out. Nothing here talks to Temporal; serve.ts does.
import { createHash } from "node:crypto";

import { z } from "zod";

/** A tool's name: a lower-case letter, then up to 63 lower-case letters,
 * digits or "_". */
export const NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** The bytes of a result's JSON, as the Temporal SDK's json/plain payload
 * converter writes it (UTF-8), above which it is `result_too_large`. */
export const RESULT_LIMIT = 1 << 20;
/** The characters of an exception's message that an activity failure keeps. */
export const MESSAGE_LIMIT = 64 << 10;

/** The JSON Schema keywords toolround's validator enforces, or that only
 * annotate; a schema with any other keyword is refused, naming it. */
export const KEYWORDS: ReadonlySet<string> = new Set([
  "type", "properties", "required", "additionalProperties", "patternProperties", "minProperties",
  "maxProperties", "propertyNames", "dependencies", "items", "contains", "enum", "const",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
  "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "anyOf", "oneOf", "allOf",
  "not", "if", "then", "else", "$ref", "$defs", "definitions", "$schema", "$id", "$comment",
  "default", "description", "title", "examples", "format", "readOnly", "writeOnly", "deprecated",
]);
// The keywords whose value holds schemas: a map of them, a list, or one.
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependencies"]);
const SCHEMA_LISTS = new Set(["anyOf", "oneOf", "allOf"]);
const SCHEMA_ONE = new Set(["additionalProperties", "propertyNames", "items", "contains", "not", "if", "then", "else"]);

export type Effect = "read_only" | "side_effect";
export type JSONValue = null | boolean | number | string | JSONValue[] | { [k: string]: JSONValue };

/** One piece of a result's content. */
export type Item =
  | { type: "text"; text: string }
  | { type: "json"; json: JSONValue }
  | { type: "image"; data: string; mime_type: string };

/** The one argument of a tool's activity `toolround.tool.<name>` (Y1a). */
export interface Envelope {
  v: number;
  tool: string;
  args_json: string;
  operation_id: string;
  call_id: string;
  workflow_id: string;
  schema_hash: string;
  attempt: number;
}

/** The result of a tool's activity (Y1a). */
export interface CallResult {
  v: 1;
  content: Item[];
  is_error: boolean;
  error_code?: string;
  attempt?: number;
  /** For a call that sent secrets: this whole result, sealed with the
   * queue's key (see secrets.ts); toolround opens and redacts it. */
  sealed?: string;
}

/** The result of a reconciliation `toolround.reconcile.<name>`. */
export interface ReconcileResult {
  v: 1;
  took_effect: boolean | null;
  content: Item[];
}

/** What a tool announces of itself (Y2). */
export interface Declaration {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  effect: Effect;
  concurrent: boolean;
  cache_seconds: number;
  subject: string;
  timeout_seconds: number;
  schedule_to_start_seconds: number;
  heartbeat_seconds: number;
  reconcile: boolean;
  schema_hash: string;
}

/** Thrown by a tool for an error its caller should read: the call's result
 * is an error with this message and `error_code` code (or "tool_error"),
 * and it is never retried. */
export class ToolError extends Error {
  readonly code?: string;
  constructor(message: string, code?: string) {
    super(message);
    this.name = "ToolError";
    this.code = code;
  }
}

/** The call's envelope, the second argument of `execute`. `operationId` is
 * empty for read-only tools; for side-effecting ones it is the call's
 * idempotency key, the same on every attempt. `signal` is aborted when the
 * call is cancelled (within one heartbeat interval). */
export interface ToolContext {
  tool: string;
  operationId: string;
  callId: string;
  workflowId: string;
  attempt: number;
  schemaHash: string;
  signal: AbortSignal;
}

const ITEM = Symbol("toolround.item");
type Marked = Item & { [ITEM]: true };

function mark<T extends Item>(item: T): T {
  Object.defineProperty(item, ITEM, { value: true, enumerable: false });
  return item;
}

function isItem(v: unknown): v is Marked {
  return typeof v === "object" && v !== null && (v as Record<symbol, unknown>)[ITEM] === true;
}

/** A text item of a result. */
export function text(s: string): Item {
  return mark({ type: "text", text: String(s) });
}

/** A JSON item of a result. */
export function json(value: unknown): Item {
  return mark({ type: "json", json: value as JSONValue });
}

/** An image item of a result: bytes (or base64 text) and a MIME type. */
export function image(data: Uint8Array | string, mimeType = "image/png"): Item {
  const b64 = typeof data === "string" ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
  return mark({ type: "image", data: b64, mime_type: mimeType });
}

/** Keys sorted, no spaces, UTF-8, nothing escaped but what JSON must. */
export function canonicalJSON(value: unknown): string {
  return JSON.stringify(sortKeys(value, "#"));
}

function sortKeys(v: unknown, at: string): unknown {
  if (typeof v === "number" && !Number.isFinite(v)) throw new Error(`${at}: ${v} is not JSON`);
  if (Array.isArray(v)) return v.map((x, i) => sortKeys(x, `${at}/${i}`));
  if (typeof v === "object" && v !== null) {
    const out: Record<string, unknown> = {};
    // Sorted by code unit, as Python's sort_keys and Go's encoding/json do
    // for the ASCII names schemas have.
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortKeys(x, `${at}/${k}`);
    }
    return out;
  }
  return v;
}

/** "sha256:" and the hex SHA-256 of the schema's canonical JSON. */
export function schemaHash(schema: unknown): string {
  return "sha256:" + createHash("sha256").update(canonicalJSON(schema), "utf8").digest("hex");
}

/** The places of the keywords toolround's validator does not enforce,
 * "path: keyword", and of $refs outside the schema. */
export function unsupportedKeywords(schema: unknown, at = "#"): string[] {
  const out: string[] = [];
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return out;
  for (const [k, v] of Object.entries(schema).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!KEYWORDS.has(k)) {
      out.push(`${at}: ${k}`);
    } else if (k === "$ref") {
      if (typeof v !== "string" || !v.startsWith("#")) out.push(`${at}: $ref ${JSON.stringify(v)} outside the schema`);
    } else if (SCHEMA_MAPS.has(k) && typeof v === "object" && v !== null && !Array.isArray(v)) {
      for (const [n, sub] of Object.entries(v)) {
        if (!Array.isArray(sub)) out.push(...unsupportedKeywords(sub, `${at}/${k}/${n}`));
      }
    } else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) {
      v.forEach((sub, i) => out.push(...unsupportedKeywords(sub, `${at}/${k}/${i}`)));
    } else if (SCHEMA_ONE.has(k)) {
      if (k === "items" && Array.isArray(v)) out.push(`${at}/items: a list of item schemas`);
      else out.push(...unsupportedKeywords(v, `${at}/${k}`));
    }
  }
  return out;
}

/** What `tool()` takes. Times are whole seconds. */
export interface ToolOptions<S extends z.ZodType> {
  name: string;
  description?: string;
  effect: Effect;
  concurrent?: boolean;
  cacheSeconds?: number;
  /** The name of a string parameter that approval rules match a glob over. */
  subject?: string;
  /** Seconds one attempt may take (60). */
  timeout?: number;
  /** Seconds a call waits for a tool worker to take it (300). */
  scheduleToStart?: number;
  /** Seconds of silence after which a tool worker is taken for dead (20). */
  heartbeat?: number;
  /** For side-effecting tools: whether a lost attempt took effect (true),
   * did not (false), or cannot be told (null). */
  reconcile?: (args: z.output<S>, ctx: ToolContext) => unknown;
  /** The arguments: a zod object schema. */
  parameters: S;
  execute: (args: z.output<S>, ctx: ToolContext) => unknown;
}

/** A tool made by `tool()`. `problems` lists what keeps it from being
 * announced; `serve` refuses to start with any. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly effect: Effect;
  readonly concurrent: boolean;
  readonly cacheSeconds: number;
  readonly subject: string;
  readonly timeout: number;
  readonly scheduleToStart: number;
  readonly heartbeat: number;
  /** The JSON schema of the arguments, as announced. */
  readonly parameters: Record<string, unknown>;
  readonly schemaHash: string;
  readonly problems: string[];
  readonly zod: z.ZodType;
  readonly execute: (args: never, ctx: ToolContext) => unknown;
  readonly reconcile?: (args: never, ctx: ToolContext) => unknown;
  /** The tool's entry of the announce update. */
  announcement(): Declaration;
}

function seconds(v: unknown, min: number): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= min;
}

/** Declares a tool: its arguments are a zod object schema, its function
 * `execute(args, ctx)`. A problem (a bad name, a schema keyword the
 * validator does not enforce) does not throw: it is in `problems`. */
export function tool<S extends z.ZodType>(opts: ToolOptions<S>): Tool {
  const problems: string[] = [];
  const name = opts.name;
  const problem = (msg: string) => problems.push(`tool ${typeof name === "string" && name ? name : "?"}: ${msg}`);
  if (typeof name !== "string" || !NAME.test(name)) problem(`the name ${JSON.stringify(name)} does not match [a-z][a-z0-9_]{0,63}`);
  if (opts.effect !== "read_only" && opts.effect !== "side_effect") {
    problem(`effect is ${JSON.stringify(opts.effect)}; it is "read_only" or "side_effect"`);
  }
  const t = {
    timeout: opts.timeout ?? 60,
    scheduleToStart: opts.scheduleToStart ?? 300,
    heartbeat: opts.heartbeat ?? 20,
    cacheSeconds: opts.cacheSeconds ?? 0,
  };
  for (const [k, v] of Object.entries(t)) {
    if (k === "cacheSeconds" ? !seconds(v, 0) : !seconds(v, 1)) {
      problem(`${k} is ${JSON.stringify(v)}; it is a whole number of seconds${k === "cacheSeconds" ? ", 0 or more" : " above 0"}`);
    }
  }
  if (t.cacheSeconds > 0 && opts.effect !== "read_only") problem("cacheSeconds is for read-only tools");
  if (opts.reconcile !== undefined) {
    if (opts.effect !== "side_effect") problem('reconcile is for side-effecting tools (effect: "side_effect")');
    if (typeof opts.reconcile !== "function") problem("reconcile is not a function");
  }
  if (typeof opts.execute !== "function") problem("execute is not a function");
  let parameters: Record<string, unknown> = {};
  let hash = "";
  // Duck-typed, so that a schema of another copy of zod 4 is one too.
  const p = opts.parameters as unknown as { _zod?: unknown; safeParse?: unknown } | undefined;
  if (typeof p !== "object" || p === null || !p._zod || typeof p.safeParse !== "function") {
    problem("parameters is not a zod 4 schema (z.object({...}))");
  } else {
    try {
      parameters = z.toJSONSchema(opts.parameters, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
      delete parameters.$schema;
    } catch (e) {
      problem(`no JSON schema for its parameters: ${(e as Error).message}`);
    }
    if (parameters.type !== "object" && Object.keys(parameters).length) {
      problem(`its parameters are not an object schema (z.object({...})) but ${JSON.stringify(parameters.type ?? "untyped")}`);
    }
    for (const where of unsupportedKeywords(parameters)) {
      problem(`its schema has a keyword the validator does not enforce (${where})`);
    }
    try {
      hash = schemaHash(parameters);
    } catch (e) {
      problem(`its schema is not JSON: ${(e as Error).message}`);
    }
  }
  const subject = opts.subject ?? "";
  if (subject) {
    const props = (parameters.properties ?? {}) as Record<string, { type?: unknown }>;
    if (!(subject in props)) problem(`subject ${JSON.stringify(subject)} is not one of its parameters`);
    else if (props[subject].type !== "string") problem(`subject ${JSON.stringify(subject)} is not a string parameter`);
  }
  const description = opts.description ?? (typeof parameters.description === "string" ? parameters.description : "");
  const out: Tool = {
    name,
    description,
    effect: opts.effect,
    concurrent: Boolean(opts.concurrent),
    subject,
    ...t,
    parameters,
    schemaHash: hash,
    problems,
    zod: opts.parameters,
    execute: opts.execute as Tool["execute"],
    reconcile: opts.reconcile as Tool["reconcile"],
    announcement: () => ({
      name,
      description,
      parameters,
      effect: opts.effect,
      concurrent: Boolean(opts.concurrent),
      cache_seconds: t.cacheSeconds,
      subject,
      timeout_seconds: t.timeout,
      schedule_to_start_seconds: t.scheduleToStart,
      heartbeat_seconds: t.heartbeat,
      reconcile: opts.reconcile !== undefined,
      schema_hash: hash,
    }),
  };
  return Object.freeze(out);
}

/** Every tool's problems, and the names two tools have. */
export function problemsOf(tools: readonly Tool[]): string[] {
  const out: string[] = [];
  const seen = new Map<string, Tool>();
  for (const t of tools) {
    if (typeof t !== "object" || t === null || !Array.isArray(t.problems) || typeof t.announcement !== "function") {
      out.push(`${String(t)} is not a tool made with tool({...})`);
      continue;
    }
    const first = seen.get(t.name);
    if (first === t) continue; // the same tool given twice is served once
    out.push(...t.problems);
    if (first) out.push(`tool ${t.name}: the name is used twice`);
    else seen.set(t.name, t);
  }
  return out;
}

// --- one call ---------------------------------------------------------------

/** The envelope is not a version 1 envelope of this tool: a non-retryable
 * failure (BadEnvelope), a bug on the calling side. */
export class BadEnvelope extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BadEnvelope";
  }
}

class BadResult extends Error {}

function kind(v: unknown): string {
  if (v === null) return "null";
  if (typeof v !== "object") return typeof v;
  return (v as object).constructor?.name ?? "object";
}

/** v as plain JSON, or BadResult naming what is not JSON. */
function jsonable(v: unknown, at: string, stack: unknown[]): JSONValue {
  switch (typeof v) {
    case "string":
    case "boolean":
      return v;
    case "number":
      if (!Number.isFinite(v)) throw new BadResult(`${at} is ${v}, which is not JSON`);
      return v;
    case "object":
      break;
    default:
      throw new BadResult(`${at} is a ${typeof v}, which is not JSON`);
  }
  if (v === null) return null;
  if (stack.includes(v)) throw new BadResult(`${at} refers to itself`);
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") {
    return jsonable((v as { toJSON: () => unknown }).toJSON(), at, [...stack, v]);
  }
  if (v instanceof Map || v instanceof Set || ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Promise) {
    throw new BadResult(`${at} is a ${kind(v)}, which is not JSON`);
  }
  const inner = [...stack, v];
  if (Array.isArray(v)) return v.map((x, i) => (x === undefined ? null : jsonable(x, `${at}[${i}]`, inner)));
  const out: Record<string, JSONValue> = {};
  for (const [k, x] of Object.entries(v)) {
    if (x !== undefined && typeof x !== "function" && typeof x !== "symbol") out[k] = jsonable(x, `${at}.${k}`, inner);
  }
  return out;
}

/** The content items of what a function returned. */
export function contentOf(value: unknown): Item[] {
  if (value === undefined || value === null) return [];
  if (isItem(value)) return [plainItem(value)];
  if (typeof value === "string") return [{ type: "text", text: value }];
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
    throw new BadResult(`the result is a ${kind(value)}; return text, JSON, or image(data, mimeType) for an image`);
  }
  if (Array.isArray(value) && value.length && value.every(isItem)) return value.map(plainItem);
  return [{ type: "json", json: jsonable(value, "the result", []) }];
}

function plainItem(i: Item): Item {
  switch (i.type) {
    case "text":
      return { type: "text", text: i.text };
    case "json":
      return { type: "json", json: jsonable(i.json, "the json item", []) };
    case "image":
      return { type: "image", data: i.data, mime_type: i.mime_type };
  }
}

function errorResult(code: string, message: string): CallResult {
  return { v: 1, content: [{ type: "text", text: message }], is_error: true, error_code: code };
}

/** The bytes of the result's JSON as the json/plain converter writes it. */
export function wireSize(result: unknown): number {
  return Buffer.byteLength(JSON.stringify(result), "utf8");
}

function capped(t: Tool, result: CallResult): CallResult {
  const n = wireSize(result);
  if (n > RESULT_LIMIT) {
    return errorResult("result_too_large", `the result of ${t.name} is ${n} bytes of JSON, more than the limit of ${RESULT_LIMIT} bytes (1 MiB)`);
  }
  return result;
}

type Prepared = { args: unknown; ctx: ToolContext };

function prepare(t: Tool, envelope: unknown, signal: AbortSignal): Prepared | CallResult {
  const e = envelope as Partial<Envelope> | null;
  if (typeof e !== "object" || e === null || Array.isArray(e) || e.v !== 1) {
    throw new BadEnvelope(`${t.name}: the input is not a version 1 envelope`);
  }
  if (e.tool !== t.name) throw new BadEnvelope(`${t.name}: the envelope is for tool ${JSON.stringify(e.tool)}`);
  if (e.schema_hash !== t.schemaHash) {
    return errorResult(
      "schema_changed",
      `the schema of ${t.name} has changed since the call was checked (${e.schema_hash || "no hash"}, now ${t.schemaHash}); ask again`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(e.args_json || "{}");
  } catch (err) {
    return errorResult("invalid_arguments", `${t.name}: the arguments are not JSON: ${(err as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return errorResult("invalid_arguments", `${t.name}: the arguments are not a JSON object`);
  }
  const parsed = t.zod.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "(arguments)"}: ${i.message}`);
    return errorResult("invalid_arguments", `${t.name}: invalid arguments: ${lines.join("; ")}`);
  }
  const ctx: ToolContext = {
    tool: t.name,
    operationId: String(e.operation_id ?? ""),
    callId: String(e.call_id ?? ""),
    workflowId: String(e.workflow_id ?? ""),
    attempt: Number.isInteger(e.attempt) ? (e.attempt as number) : 1,
    schemaHash: t.schemaHash,
    signal,
  };
  return { args: parsed.data, ctx };
}

/** How a call runs: `heartbeat`, when given, is called at once and then
 * every `intervalMs` (heartbeat/3 by default) while the function runs;
 * `signal`, when aborted, aborts the function's ctx.signal and ends the
 * call at once with the signal's reason. */
export interface RunOptions {
  heartbeat?: () => void;
  intervalMs?: number;
  signal?: AbortSignal;
}

async function run(fn: (args: never, ctx: ToolContext) => unknown, p: Prepared, interval: number, o: RunOptions): Promise<unknown> {
  const signal = o.signal ?? new AbortController().signal;
  let timer: ReturnType<typeof setInterval> | undefined;
  let onAbort: (() => void) | undefined;
  if (o.heartbeat) {
    const beat = o.heartbeat;
    beat();
    timer = setInterval(beat, interval);
  }
  try {
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason ?? new Error("the call was cancelled"));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    const done = Promise.resolve().then(() => fn(p.args as never, p.ctx));
    // What the function returns or throws after a cancel is dropped.
    done.catch(() => undefined);
    aborted.catch(() => undefined);
    return await Promise.race([done, aborted]);
  } finally {
    if (timer !== undefined) clearInterval(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

/** Runs one call of t from its envelope and returns the result object. A
 * ToolError is an error result; any other exception is thrown as it is
 * (serve turns it into an activity failure), as is BadEnvelope; so is the
 * signal's reason when the call is cancelled. */
export async function call(t: Tool, envelope: unknown, o: RunOptions = {}): Promise<CallResult> {
  const p = prepare(t, envelope, o.signal ?? new AbortController().signal);
  if (!("ctx" in p)) return p;
  let value: unknown;
  try {
    value = await run(t.execute, p, o.intervalMs ?? (t.heartbeat * 1000) / 3, o);
  } catch (e) {
    if (e instanceof ToolError && !o.signal?.aborted) return capped(t, errorResult(e.code || "tool_error", e.message));
    throw e;
  }
  let content: Item[];
  try {
    content = contentOf(value);
  } catch (e) {
    if (e instanceof BadResult) return errorResult("bad_result", `${t.name} returned a result that cannot be sent: ${e.message}`);
    throw e;
  }
  return capped(t, { v: 1, content, is_error: false });
}

/** Runs t's reconcile function for a call: took_effect true, false or null. */
export async function reconcile(t: Tool, envelope: unknown, o: RunOptions = {}): Promise<ReconcileResult> {
  if (!t.reconcile) throw new BadEnvelope(`${t.name} has no reconcile function`);
  const p = prepare(t, envelope, o.signal ?? new AbortController().signal);
  if (!("ctx" in p)) return { v: 1, took_effect: null, content: p.content };
  let value: unknown;
  try {
    value = await run(t.reconcile, p, o.intervalMs ?? (t.heartbeat * 1000) / 3, o);
  } catch (e) {
    if (e instanceof ToolError && !o.signal?.aborted) return { v: 1, took_effect: null, content: [{ type: "text", text: e.message }] };
    throw e;
  }
  if (value === undefined) value = null;
  if (value !== null && typeof value !== "boolean") {
    return {
      v: 1,
      took_effect: null,
      content: [{ type: "text", text: `the reconcile function of ${t.name} returned ${kind(value)}, not true, false or null` }],
    };
  }
  return { v: 1, took_effect: value, content: [] };
}

/** The activity failure's type and message for what a function threw: its
 * class's name and its message, cut at 64 KiB. */
export function failureOf(e: unknown): { type: string; message: string } {
  let type = "Error";
  let message: string;
  if (e instanceof Error) {
    type = e.constructor?.name && e.constructor.name !== "Error" ? e.constructor.name : e.name || "Error";
    message = e.message;
  } else {
    message = String(e);
  }
  if (message.length > MESSAGE_LIMIT) message = `${message.slice(0, MESSAGE_LIMIT)}... (cut at ${MESSAGE_LIMIT} characters)`;
  return { type, message: message || type };
}
