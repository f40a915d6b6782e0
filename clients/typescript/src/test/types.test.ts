// The checked-in request and response types are what the OpenAPI document
// gives: regenerating them changes nothing.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

// @ts-ignore: a plain ES module script of the package, outside src/.
import { generate, generateFromFile, outputPath } from "../../scripts/gen-types.mjs";

test("src/api-types.ts is generated from console/openapi/openapi.json", () => {
  const want: string = generateFromFile();
  const have = readFileSync(outputPath, "utf8");
  assert.ok(have === want, "src/api-types.ts drifted from the OpenAPI document: run `node scripts/gen-types.mjs` in clients/typescript");
});

test("the generator follows the document", () => {
  const doc = {
    openapi: "3.1.0",
    info: { title: "t", version: "1" },
    paths: { "/x": { post: { operationId: "doX" } } },
    components: {
      schemas: {
        Error: { type: "object", required: ["error"], additionalProperties: false, properties: { error: { type: "string", enum: ["a", "b"] } } },
        Thing: {
          type: "object",
          required: ["id"],
          additionalProperties: false,
          properties: { id: { type: "string" }, n: { type: ["integer", "null"] }, errs: { type: "array", items: { $ref: "#/components/schemas/Error" } } },
        },
      },
    },
  };
  const out: string = generate(doc);
  assert.match(out, /export interface ErrorBody \{\n  error: "a" \| "b";\n\}/);
  assert.match(out, /export interface Thing \{\n  id: string;\n  n\?: number \| null;\n  errs\?: ErrorBody\[\];\n\}/);
  assert.match(out, /doX: \{ method: "POST", path: "\/x" \}/);
  // A changed document gives another file: the drift test would see it.
  doc.components.schemas.Thing.properties.id = { type: "integer" };
  assert.notEqual(generate(doc), out);
});
