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
