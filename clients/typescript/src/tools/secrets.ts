// The secrets a call sends its tool (SPEC Y3, T9): the round seals the
// values of the call's {{secret:NAME}} placeholders with the tool worker's
// queue key; the tool worker opens them, puts them in the arguments'
// strings, and seals its answer with the same key, so that toolround
// redacts the values before anything enters workflow history.
//
// The queue key is TOOLROUND_TOOL_KEY (what `starter tool-key QUEUE`
// prints), else derived from toolround's own secret key when this process
// can read it (TOOLROUND_SECRET_KEY, TOOLROUND_SECRET_KEY_FILE, or the
// default key file).
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const SEALED_PREFIX = "sealed:v1:";
export const ENV_TOOL_KEY = "TOOLROUND_TOOL_KEY";
export const FAILURE_SEALED = "ToolFailureSealed";
const REF = /\{\{\s*secret:([A-Za-z0-9_.-]+)\s*\}\}/g;

/** The call sends secrets this tool worker cannot open. */
export class SecretsUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretsUnavailable";
  }
}

function decodeKey(text: string, where: string): Buffer {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) throw new SecretsUnavailable(`${where} is not base64 (want the base64 of 32 random bytes)`);
  const key = Buffer.from(t.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (key.length !== 32) throw new SecretsUnavailable(`${where} is ${key.length} bytes, want 32 (the base64 of 32 random bytes)`);
  return key;
}

function defaultKeyFile(): string {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), ".config"), "toolround", "secret.key");
}

/** The key of queue's sealed secrets; SecretsUnavailable when there is none. */
export function queueKey(queue: string): Buffer {
  const own = process.env[ENV_TOOL_KEY];
  if (own) return decodeKey(own, ENV_TOOL_KEY);
  let master: Buffer;
  if (process.env.TOOLROUND_SECRET_KEY) {
    master = decodeKey(process.env.TOOLROUND_SECRET_KEY, "TOOLROUND_SECRET_KEY");
  } else {
    const path = process.env.TOOLROUND_SECRET_KEY_FILE || defaultKeyFile();
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      throw new SecretsUnavailable(
        `no ${ENV_TOOL_KEY} is set; run \`starter tool-key ${queue}\` where toolround's secret key is, and give this tool worker what it prints`,
      );
    }
    master = decodeKey(text, path);
  }
  return createHmac("sha256", master).update("toolround tool secrets v1\x00").update(queue, "utf8").digest();
}

/** AES-256-GCM of plaintext under key, as toolround seals: the prefix, then
 * the base64 of the 12-byte nonce and the ciphertext with its tag. */
export function seal(key: Buffer, plaintext: string): string {
  const nonce = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, nonce);
  const body = Buffer.concat([c.update(plaintext, "utf8"), c.final(), c.getAuthTag()]);
  return SEALED_PREFIX + Buffer.concat([nonce, body]).toString("base64");
}

export function openSealed(key: Buffer, sealed: unknown): string {
  if (typeof sealed !== "string" || !sealed.startsWith(SEALED_PREFIX)) throw new SecretsUnavailable("a value is not sealed");
  try {
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), "base64");
    const d = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString("utf8");
  } catch {
    throw new SecretsUnavailable("a value does not open with this key");
  }
}

/** value with every {{secret:NAME}} the call sent replaced in its strings. */
export function withSecrets(value: unknown, values: Record<string, string>): unknown {
  if (typeof value === "string") return value.replace(REF, (m, name: string) => (Object.hasOwn(values, name) ? values[name] : m));
  if (Array.isArray(value)) return value.map((v) => withSecrets(v, values));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = withSecrets(v, values);
    return out;
  }
  return value;
}

/** The queue key and the envelope with the secrets' values in its
 * arguments; SecretsUnavailable when they do not open. */
export function openCall(envelope: Record<string, unknown>, queue: string): { key: Buffer; envelope: Record<string, unknown> } {
  const key = queueKey(queue);
  const sent = envelope.secrets;
  if (!sent || typeof sent !== "object" || Array.isArray(sent)) throw new SecretsUnavailable("the envelope's secrets are not an object");
  const values: Record<string, string> = {};
  for (const [name, sealed] of Object.entries(sent)) {
    try {
      values[name] = openSealed(key, sealed);
    } catch {
      throw new SecretsUnavailable(
        `secret ${name} does not open with this tool worker's key for queue ${queue} (${ENV_TOOL_KEY} holds another queue's key, or toolround's key changed)`,
      );
    }
  }
  const { secrets: _sent, ...rest } = envelope;
  let args: unknown;
  try {
    args = JSON.parse(typeof envelope.args_json === "string" && envelope.args_json ? envelope.args_json : "{}");
  } catch {
    return { key, envelope: rest }; // the call reports its arguments as it would
  }
  return { key, envelope: { ...rest, args_json: JSON.stringify(withSecrets(args, values)) } };
}
