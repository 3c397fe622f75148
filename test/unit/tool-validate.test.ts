import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/protocol/limits";
import { InitializeParams, PROTOCOL_VERSION, ToolDeclaration } from "../../src/protocol/methods";
import { checkSchema, validateArguments } from "../../src/tools/validate";

const EVENT = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1 },
    date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
    attendees: { type: "array", items: { type: "object", properties: { email: { type: "string" } }, required: ["email"] } },
    priority: { enum: ["low", "high"] },
    "odd key": { type: "integer", maximum: 3 },
  },
  required: ["title", "date"],
  additionalProperties: false,
};

describe("checkSchema", () => {
  it("accepts an object schema with nested definitions and local references", () => {
    expect(checkSchema(EVENT)).toEqual({ ok: true, value: true });
    expect(checkSchema({ type: "object", properties: { a: { $ref: "#/$defs/a" } }, $defs: { a: { type: "string" } } }).ok).toBe(true);
    expect(checkSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { p: { items: [{ type: "string" }] } } }).ok).toBe(true);
  });

  it.each([
    [[], "must be a JSON Schema object"],
    [{ properties: {} }, 'type must be "object"'],
    [{ type: "string" }, 'type must be "object"'],
    [{ type: "object", properties: { d: { type: "date" } } }, 'inputSchema.properties.d.type: "date" is not a JSON Schema type'],
    [{ type: "object", properties: { d: { type: "string", pattern: "([a-z" } } }, "inputSchema.properties.d.pattern: not a valid regular expression"],
    [{ type: "object", required: "title" }, "inputSchema.required: must be an array of property names"],
    [{ type: "object", properties: { a: { $ref: "#/$defs/missing" } } }, 'inputSchema.properties.a.$ref: "#/$defs/missing" does not point inside this schema'],
    [{ type: "object", properties: { a: { $ref: "https://example.com/s.json" } } }, "only local references"],
    [{ type: "object", properties: { a: { anyOf: [] } } }, "inputSchema.properties.a.anyOf: must be a non-empty array of schemas"],
    [{ type: "object", properties: { a: { maxLength: -1 } } }, "inputSchema.properties.a.maxLength: must be a non-negative integer"],
    [{ type: "object", properties: { a: 5 } }, "inputSchema.properties.a: a schema must be an object or a boolean"],
  ])("refuses %j clearly", (schema, detail) => {
    const checked = checkSchema(schema);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.problem.detail).toContain(detail);
  });

  it("refuses a schema over LIMITS.toolSchemaChars and one nested too deep", () => {
    const big = { type: "object", description: "x".repeat(LIMITS.toolSchemaChars) };
    expect(checkSchema(big)).toMatchObject({ ok: false, problem: { detail: expect.stringContaining(`at most ${LIMITS.toolSchemaChars}`) } });
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 40; i++) deep = { type: "object", properties: { n: deep } };
    expect(checkSchema(deep)).toMatchObject({ ok: false, problem: { detail: expect.stringContaining("nested deeper than") } });
  });

  it("makes a schema of the wrong shape an initialize params issue that names the tool; the JSON Schema check is the runtime's", () => {
    const init = (inputSchema: Record<string, unknown>) =>
      InitializeParams.safeParse({ protocolVersion: PROTOCOL_VERSION, app: { name: "cal", version: "1" }, tools: [{ name: "ok" }, { name: "create_event", inputSchema }] });
    const flat = init({ type: "string" });
    expect(flat.success).toBe(false);
    const issue = flat.error!.issues[0]!;
    expect(issue.path).toEqual(["tools", 1, "inputSchema"]);
    expect(issue.message).toBe(`tool 'create_event': inputSchema.type must be "object" (tool arguments are an object)`);
    const big = init({ type: "object", description: "x".repeat(LIMITS.toolSchemaChars) });
    expect(big.error!.issues[0]!.message).toContain(`tool 'create_event': inputSchema is ${LIMITS.toolSchemaChars + 34} characters as JSON`);
    // The protocol (and so the SDK) checks shape only: a wrong keyword is refused by the hub at initialize (test/workers/app-tools.test.ts).
    const wrongKeyword = { type: "object", properties: { when: { type: "datetime" } } };
    expect(init(wrongKeyword).success).toBe(true);
    expect(checkSchema(wrongKeyword)).toMatchObject({ ok: false, problem: { detail: expect.stringContaining("inputSchema.properties.when.type") } });
  });

  it("gives a declared tool an empty object schema by default", () => {
    expect(ToolDeclaration.parse({ name: "now" })).toEqual({ name: "now", description: "", inputSchema: { type: "object", properties: {} } });
  });
});

describe("validateArguments", () => {
  it("passes arguments that fit", () => {
    expect(validateArguments(EVENT, { title: "Lunch", date: "2026-11-20", attendees: [{ email: "a@b.c" }], priority: "low" })).toEqual({ ok: true, value: true });
  });

  it("says what is wrong where, in words a model can act on", () => {
    const result = validateArguments(EVENT, { title: "", date: 20261120, attendees: [{ name: "Bo" }], priority: "urgent", extra: 1, "odd key": 9 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toEqual([
      "arguments.title: String is too short (0 < 1)",
      "arguments.date: expected string, got number",
      "arguments.attendees[0].email: required",
      'arguments.priority: expected one of ["low","high"]',
      'arguments["odd key"]: 9 is greater than 3',
      "(1 more)",
    ]);
  });

  it("reports missing required properties and a non-object", () => {
    expect(validateArguments(EVENT, {})).toEqual({ ok: false, problem: ["arguments.title: required", "arguments.date: required"] });
    expect(validateArguments(EVENT, "hello")).toEqual({ ok: false, problem: ["arguments: expected object, got string"] });
    expect(validateArguments(EVENT, { title: "x", date: "2026-1-1" })).toEqual({ ok: false, problem: ["arguments.date: String does not match pattern"] });
    expect(validateArguments(EVENT, { title: "x", date: "2026-01-01", more: true })).toEqual({ ok: false, problem: ["arguments.more: unexpected property"] });
  });

  it("reuses one compiled validator per schema", () => {
    const schema = { type: "object", properties: { n: { type: "number" } } };
    for (let i = 0; i < 1000; i++) expect(validateArguments({ ...schema }, { n: i }).ok).toBe(true);
  });
});
