/**
 * Tool input schemas: checked once when an app declares them (`checkSchema`), and used to
 * validate a model's arguments before any call reaches the app (`validateArguments`).
 * `@cfworker/json-schema` interprets schemas (no code generation), so it runs in Workers.
 */
import { encodePointer, Validator, type OutputUnit, type Schema, type SchemaDraft } from "@cfworker/json-schema";
import { LIMITS } from "../protocol/limits";
import { fail, failWith, ok, type Result } from "../core/problem";

/** Errors a model reads at once: enough to fix a call, few enough to stay short. */
const MAX_ERRORS = 5;
/** Nesting a schema may have; deeper ones are refused rather than risking the stack. */
const MAX_DEPTH = 32;
const CACHE_SIZE = 256;

const TYPES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);
const SCHEMA_KEYWORDS = ["not", "if", "then", "else", "additionalProperties", "additionalItems", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"];
const SCHEMA_MAP_KEYWORDS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_LIST_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems"];
const COUNT_KEYWORDS = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"];
const NUMBER_KEYWORDS = ["minimum", "maximum"];

/** Compiled validators by schema JSON: a tool's schema is compiled once per object lifetime, not per call. */
const compiled = new Map<string, Validator>();

/**
 * Whether `schema` is a usable tool input schema: a JSON object of `type: "object"`, at most
 * `LIMITS.toolSchemaChars` as JSON, whose keywords have the types JSON Schema gives them, whose
 * patterns compile and whose `$ref`s point inside it. The detail names the first fault's path.
 */
export function checkSchema(schema: unknown): Result<true> {
  if (!isObject(schema)) return fail("invalid-request", "inputSchema must be a JSON Schema object");
  let json: string;
  try {
    json = JSON.stringify(schema);
  } catch {
    return fail("invalid-request", "inputSchema is not JSON");
  }
  if (json.length > LIMITS.toolSchemaChars) {
    return fail("invalid-request", `inputSchema is ${json.length} characters as JSON; at most ${LIMITS.toolSchemaChars}`);
  }
  if (schema.type !== "object") return fail("invalid-request", `inputSchema.type must be "object" (tool arguments are an object)`);
  const fault = faultIn(schema, "inputSchema", 0, schema);
  if (fault) return fail("invalid-request", fault);
  try {
    // Validating an empty object walks the top level: a fault the structural check missed throws here.
    validatorFor(schema, json).validate({});
  } catch (error) {
    return fail("invalid-request", `inputSchema cannot be used: ${error instanceof Error ? error.message : String(error)}`);
  }
  return ok(true);
}

/** Validates a model's arguments; errors read `arguments.date: expected string, got number` (at most 5). */
export function validateArguments(schema: object, args: unknown): Result<true, string[]> {
  let result;
  try {
    result = validatorFor(schema as Schema).validate(args);
  } catch (error) {
    return failWith([`arguments: cannot be checked: ${error instanceof Error ? error.message : String(error)}`]);
  }
  if (result.valid) return ok(true);
  // An additional property refused by `false` comes as two units; the additionalProperties one says it better.
  const extra = new Set(result.errors.flatMap((u) => (u.keyword === "additionalProperties" ? [childPointer(u.instanceLocation, extraKey(u.error))] : [])));
  const units = result.errors.filter((u) => !(u.keyword === "false" && extra.has(u.instanceLocation)));
  const errors = [...new Set(units.flatMap(readable))];
  if (errors.length === 0) errors.push("arguments: do not match the tool's input schema");
  return failWith(errors.length > MAX_ERRORS ? [...errors.slice(0, MAX_ERRORS), `(${errors.length - MAX_ERRORS} more)`] : errors);
}

function validatorFor(schema: Schema, json = JSON.stringify(schema)): Validator {
  let validator = compiled.get(json);
  if (validator) {
    // Most recently used last, so the oldest goes first when the cache is full.
    compiled.delete(json);
  } else {
    validator = new Validator(schema, draftOf(schema), false);
  }
  compiled.set(json, validator);
  if (compiled.size > CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  return validator;
}

function draftOf(schema: Schema): SchemaDraft {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared.includes("draft-04")) return "4";
  if (declared.includes("draft-06") || declared.includes("draft-07")) return "7";
  if (declared.includes("2019-09")) return "2019-09";
  return "2020-12";
}

// ── Readable errors ─────────────────────────────────────────────────────────

/** One library error as a line a model can act on; wrappers whose detail follows them say nothing. */
function readable(unit: OutputUnit): string[] {
  const at = pathOf(unit.instanceLocation);
  const { keyword, error } = unit;
  if (error === "A subschema had errors." || error === "Items did not match schema." || /^Property ".*" does not match schema\.$/s.test(error)) return [];
  if (keyword === "false") return [`${at}: not allowed`];
  if (keyword === "type") {
    const expected = /Expected "(.*)"\.$/s.exec(error)?.[1]?.split('", "').join(" or ");
    const got = /Instance type "([^"]*)"/.exec(error)?.[1];
    return [`${at}: expected ${expected ?? "another type"}${got ? `, got ${got}` : ""}`];
  }
  if (keyword === "required") {
    const key = /required property "(.*)"\.$/s.exec(error)?.[1] ?? "";
    return [`${pathOf(childPointer(unit.instanceLocation, key))}: required`];
  }
  if (keyword === "additionalProperties") return [`${pathOf(childPointer(unit.instanceLocation, extraKey(error)))}: unexpected property`];
  if (keyword === "enum") return [`${at}: ${error.replace(/^Instance does not match any of/, "expected one of").replace(/\.$/, "")}`];
  if (keyword === "const") return [`${at}: ${error.replace(/^Instance does not match/, "expected").replace(/\.$/, "")}`];
  return [`${at}: ${error.replace(/^Instance /, "").replace(/\.$/, "")}`];
}

function extraKey(error: string): string {
  return /^Property "(.*)" does not match/s.exec(error)?.[1] ?? "";
}

/** The library's pointer to `key` under `pointer`. */
function childPointer(pointer: string, key: string): string {
  return `${pointer}/${encodePointer(key)}`;
}

/** `#/items/0/date` → `arguments.items[0].date`. */
function pathOf(pointer: string): string {
  const parts = pointer.replace(/^#\/?/, "").split("/").filter((p) => p !== "");
  let path = "arguments";
  for (const raw of parts) {
    const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    path += /^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`;
  }
  return path;
}

// ── Structural check ────────────────────────────────────────────────────────

function faultIn(node: unknown, path: string, depth: number, root: Record<string, unknown>): string | null {
  if (typeof node === "boolean") return null;
  if (!isObject(node)) return `${path}: a schema must be an object or a boolean`;
  if (depth > MAX_DEPTH) return `${path}: nested deeper than ${MAX_DEPTH} levels`;
  const sub = (value: unknown, at: string) => faultIn(value, at, depth + 1, root);

  if (node.type !== undefined) {
    const types = Array.isArray(node.type) ? node.type : [node.type];
    const bad = types.find((t) => typeof t !== "string" || !TYPES.has(t));
    if (bad !== undefined || types.length === 0) return `${path}.type: ${JSON.stringify(bad ?? node.type)} is not a JSON Schema type (${[...TYPES].join(", ")})`;
  }
  for (const key of SCHEMA_KEYWORDS) {
    if (node[key] === undefined) continue;
    const fault = sub(node[key], `${path}.${key}`);
    if (fault) return fault;
  }
  for (const key of SCHEMA_MAP_KEYWORDS) {
    if (node[key] === undefined) continue;
    const map = node[key];
    if (!isObject(map)) return `${path}.${key}: must be an object of schemas`;
    for (const [name, value] of Object.entries(map)) {
      if (key === "patternProperties") {
        const bad = badPattern(name);
        if (bad) return `${path}.patternProperties: ${JSON.stringify(name)} is not a valid pattern (${bad})`;
      }
      const fault = sub(value, `${path}.${key}.${name}`);
      if (fault) return fault;
    }
  }
  for (const key of SCHEMA_LIST_KEYWORDS) {
    if (node[key] === undefined) continue;
    const list = node[key];
    if (!Array.isArray(list) || (key !== "prefixItems" && list.length === 0)) return `${path}.${key}: must be a non-empty array of schemas`;
    for (const [i, value] of list.entries()) {
      const fault = sub(value, `${path}.${key}[${i}]`);
      if (fault) return fault;
    }
  }
  if (node.items !== undefined) {
    const items = Array.isArray(node.items) ? node.items : [node.items];
    for (const [i, value] of items.entries()) {
      const fault = sub(value, Array.isArray(node.items) ? `${path}.items[${i}]` : `${path}.items`);
      if (fault) return fault;
    }
  }
  if (node.required !== undefined && (!Array.isArray(node.required) || node.required.some((r) => typeof r !== "string"))) {
    return `${path}.required: must be an array of property names`;
  }
  if (node.enum !== undefined && !Array.isArray(node.enum)) return `${path}.enum: must be an array`;
  for (const key of COUNT_KEYWORDS) {
    const value = node[key];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) return `${path}.${key}: must be a non-negative integer`;
  }
  for (const key of NUMBER_KEYWORDS) {
    if (node[key] !== undefined && typeof node[key] !== "number") return `${path}.${key}: must be a number`;
  }
  for (const key of ["exclusiveMinimum", "exclusiveMaximum"]) {
    if (node[key] !== undefined && typeof node[key] !== "number" && typeof node[key] !== "boolean") return `${path}.${key}: must be a number`;
  }
  if (node.multipleOf !== undefined && !(typeof node.multipleOf === "number" && node.multipleOf > 0)) return `${path}.multipleOf: must be a number above 0`;
  if (node.pattern !== undefined) {
    if (typeof node.pattern !== "string") return `${path}.pattern: must be a string`;
    const bad = badPattern(node.pattern);
    if (bad) return `${path}.pattern: not a valid regular expression (${bad})`;
  }
  if (node.format !== undefined && typeof node.format !== "string") return `${path}.format: must be a string`;
  if (node.$ref !== undefined) {
    if (typeof node.$ref !== "string") return `${path}.$ref: must be a string`;
    if (!resolves(node.$ref, root)) return `${path}.$ref: ${JSON.stringify(node.$ref)} does not point inside this schema (only local references such as "#/$defs/x" are allowed)`;
  }
  return null;
}

function badPattern(pattern: string): string | null {
  try {
    new RegExp(pattern, "u");
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : "invalid";
  }
}

/** A `#`-pointer that resolves inside the schema, or an `$anchor` it declares. */
function resolves(ref: string, root: Record<string, unknown>): boolean {
  if (ref === "#") return true;
  if (ref.startsWith("#/")) {
    let node: unknown = root;
    for (const raw of ref.slice(2).split("/")) {
      const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      if (Array.isArray(node) && /^\d+$/.test(part)) node = node[Number(part)];
      else if (isObject(node) && Object.hasOwn(node, part)) node = node[part];
      else return false;
    }
    return typeof node === "boolean" || isObject(node);
  }
  if (ref.startsWith("#")) return JSON.stringify(root).includes(`"$anchor":${JSON.stringify(ref.slice(1))}`);
  return false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A call's arguments as the model wrote them: a JSON object, or why not. */
export function parseArguments(text: string): Result<Record<string, unknown>> {
  try {
    const value: unknown = JSON.parse(text === "" ? "{}" : text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? ok(value as Record<string, unknown>) : fail("invalid-request", "the arguments are not a JSON object");
  } catch {
    return fail("invalid-request", "the arguments are not valid JSON");
  }
}
