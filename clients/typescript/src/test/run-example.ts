// Runs a file of examples/typescript as a user's program that installed
// toolround and the frameworks: examples/typescript/node_modules is a link
// to this package's node_modules, where toolround links to this package.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, symlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const root = resolve(pkg, "..", "..");
export const examples = join(root, "examples", "typescript");

function link(target: string, path: string): void {
  try {
    lstatSync(path);
    return;
  } catch {
    /* not there yet */
  }
  symlinkSync(target, path, "dir");
}

export function runExample(file: string, env: Record<string, string>, timeoutMs = 180_000): { status: number | null; out: string } {
  if (!existsSync(join(pkg, "dist", "index.js"))) throw new Error("clients/typescript is not built (npx tsc)");
  link("..", join(pkg, "node_modules", "toolround"));
  link(join("..", "..", "clients", "typescript", "node_modules"), join(examples, "node_modules"));
  const r = spawnSync(process.execPath, [join(examples, file)], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: timeoutMs,
  });
  return { status: r.status, out: (r.stdout ?? "") + (r.stderr ?? "") + (r.error ? String(r.error) : "") };
}
