import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { live, skip } from "./live.js";
import { runExample } from "./run-example.js";

for (const file of ["ai-sdk.mjs", "langgraph.mjs"]) {
  test(`examples/typescript/${file} runs`, { skip }, () => {
    const { url, approver, session, workdir } = live(file);
    const r = runExample(file, {
      CONSOLE_URL: url,
      CONSOLE_TOKEN: approver.token,
      SESSION: session,
      RUN: "example",
      APPROVE: "yes",
      TOOL_QUEUE: process.env.TOOLROUND_TOOL_QUEUE ?? "my-tools",
    });
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /answer\.txt/);
    assert.match(r.out, /42/);
    assert.match(r.out, /I wrote the answer to answer\.txt\./, "the model's final answer");
    assert.equal(readFileSync(join(workdir, "answer.txt"), "utf8"), "42\n");
    assert.match(r.out, /order A-1: shipped/, "the app's own tool ran in a round");
  });
}
