// Runs a file of examples/typescript in place, the way its header and
// docs/clients.md say: `npm pack` in clients/typescript (this package, as a
// tarball), `npm install` in examples/typescript (its package.json takes
// toolround from that tarball, and the frameworks), then
// `node examples/typescript/FILE` from the repository's root.
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const root = resolve(pkg, "..", "..");
export const examples = join(root, "examples", "typescript");

// npm is the one beside the node that runs the tests, else the PATH's.
function npm(): string {
  const beside = join(dirname(process.execPath), "npm");
  return existsSync(beside) ? beside : "npm";
}

function sh(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout: 300_000 });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} in ${cwd}: ${r.status}\n${r.stdout ?? ""}${r.stderr ?? ""}${r.error ?? ""}`);
  }
}

let installed = false;

// install does the header's two install steps once per test process.
export function install(): void {
  if (installed) return;
  if (!existsSync(join(pkg, "dist", "index.js"))) throw new Error("clients/typescript is not built (npx tsc)");
  // A node_modules that older tests linked to this package's would take
  // the install in its place.
  const modules = join(examples, "node_modules");
  try {
    if (lstatSync(modules).isSymbolicLink()) rmSync(modules);
  } catch {
    /* not there */
  }
  sh(npm(), ["pack", "--silent"], pkg);
  // The tarball of this build, not one installed before it.
  rmSync(join(modules, "toolround"), { recursive: true, force: true });
  sh(npm(), ["install", "--prefer-offline", "--no-audit", "--no-fund"], examples);
  installed = true;
}

export function runExample(file: string, env: Record<string, string>, timeoutMs = 180_000): { status: number | null; out: string } {
  install();
  const r = spawnSync(process.execPath, [join("examples", "typescript", file)], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: timeoutMs,
  });
  return { status: r.status, out: (r.stdout ?? "") + (r.stderr ?? "") + (r.error ? String(r.error) : "") };
}
