import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { live, skip } from "./live.js";
import { examples, root, runExample } from "./run-example.js";

test("the README's TypeScript snippet is examples/typescript/quickstart.mjs and runs", { skip }, () => {
  const { url, approver } = live("quickstart");
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Other languages"));
  const start = section.indexOf("```js\n");
  assert.ok(start >= 0, "the README's Other languages section has a js snippet");
  let snippet = section.slice(start + "```js\n".length);
  snippet = snippet.slice(0, snippet.indexOf("```"));
  assert.equal(readFileSync(join(examples, "quickstart.mjs"), "utf8"), snippet, "the README's TypeScript snippet is examples/typescript/quickstart.mjs");
  assert.ok(snippet.trim().split("\n").length <= 10);
  const r = runExample("quickstart.mjs", { CONSOLE_URL: url, CONSOLE_TOKEN: approver.token }, 120_000);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /42/);
  assert.match(r.out, /\(round 2\)/);
});

// The examples' headers and docs/clients.md say how to install toolround
// from this repository (it is not on the npm registry), and the examples'
// package.json takes it from that tarball.
test("the examples install toolround from this repository", () => {
  const pkgJSON = JSON.parse(readFileSync(join(examples, "package.json"), "utf8"));
  assert.equal(pkgJSON.dependencies.toolround, "file:../../clients/typescript/toolround-0.1.0.tgz");
  const version = JSON.parse(readFileSync(join(root, "clients", "typescript", "package.json"), "utf8")).version;
  assert.equal(pkgJSON.dependencies.toolround, `file:../../clients/typescript/toolround-${version}.tgz`, "the tarball of this version");
  for (const file of ["ai-sdk.mjs", "langgraph.mjs"]) {
    const src = readFileSync(join(examples, file), "utf8");
    assert.doesNotMatch(src, /npm install toolround/, file);
    assert.match(src, /\(cd clients\/typescript && npm ci && npm run build && npm pack\)/, file);
    assert.match(src, /\(cd examples\/typescript && npm install\)/, file);
    assert.match(src, new RegExp(`node examples/typescript/${file.replace(".", "\\.")}`), file);
  }
  const docs = readFileSync(join(root, "docs", "clients.md"), "utf8");
  assert.match(docs, /npm run build && npm pack/);
  assert.match(docs, /\(cd examples\/typescript && npm install\)/);
});
