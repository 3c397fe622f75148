import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { worker as api } from "../../src/worker";
import { ROUTES } from "../../src/api/openapi";
import { BASE, freshIdentity, Frontend, worker } from "./support/runtime";
import { TestApp } from "./support/test-app";

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required: boolean; schema: object }[];
  requestBody?: { required: boolean; content: Record<string, { schema: { $ref: string } }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: { $ref?: string } }> }>;
}
interface Document {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; securitySchemes: Record<string, object> };
}

async function fetchDocument(): Promise<Document> {
  const res = await worker().fetch(`${BASE}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("Content-Type")).toContain("application/json");
  return res.json();
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/** Every route hono registers under /v1, as `METHOD /v1/path/{param}`. */
function registeredRoutes(): string[] {
  const routes = api.routes
    .filter((r) => r.method !== "ALL" && r.path.startsWith("/v1"))
    .map((r) => `${r.method} ${r.path.replace(/\/$/, "").replace(/:(\w+)/g, "{$1}")}`);
  return [...new Set(routes)].sort();
}

/** A validator for one named schema, with the document's components to resolve `$ref`s against. */
function validatorFor(doc: Document, name: string): Validator {
  const schema = { $schema: "https://json-schema.org/draft/2020-12/schema", $ref: `#/components/schemas/${name}`, components: doc.components };
  return new Validator(schema as never, "2020-12", false);
}

function expectValid(doc: Document, name: string, value: unknown) {
  const result = validatorFor(doc, name).validate(value);
  expect(result.valid, `${name}: ${JSON.stringify(result.errors.slice(0, 3))}`).toBe(true);
}

describe("GET /openapi.json", () => {
  it("is served without a key and has the structure of OpenAPI 3.1", async () => {
    const doc = await fetchDocument();
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    expect(Object.keys(doc.paths).length).toBeGreaterThan(20);
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(20);
    const refs = new Set<string>();
    JSON.stringify(doc, (key, value) => (key === "$ref" && typeof value === "string" ? (refs.add(value), value) : value));
    for (const r of refs) {
      expect(r, "refs point into components").toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[r.slice("#/components/schemas/".length)], r).toBeDefined();
    }
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(path).toMatch(/^\/v1\//);
      for (const [method, op] of Object.entries(item)) {
        expect(METHODS).toContain(method);
        expect(Object.keys(op.responses).length, `${method} ${path}`).toBeGreaterThan(0);
        for (const response of Object.values(op.responses)) expect(typeof response.description).toBe("string");
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
        // Every {param} of the path is declared, and nothing else is a path parameter.
        const declared = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
        expect(declared).toEqual([...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
        for (const p of op.parameters ?? []) expect(["path", "query", "header"]).toContain(p.in);
      }
    }
  });

  it("names every route hono registers under /v1, and no other", async () => {
    const doc = await fetchDocument();
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)).sort();
    // A route missing here is added to ROUTES in src/api/openapi.ts, with its query, body and answer schemas.
    expect(documented).toEqual(registeredRoutes());
    expect(ROUTES.length).toBe(documented.length);
  });

  it("describes bodies and queries as the routes validate them, and answers as they are sent", async () => {
    const doc = await fetchDocument();
    const turnBody = doc.paths["/v1/conversations/{id}/turns"]!.post!.requestBody!;
    expect(turnBody.required).toBe(true);
    expect(turnBody.content["application/json"]!.schema.$ref).toBe("#/components/schemas/TurnBody");
    expect(doc.paths["/v1/conversations"]!.post!.requestBody!.required).toBe(false);
    const listParams = doc.paths["/v1/conversations"]!.get!.parameters!;
    expect(listParams.map((p) => [p.name, p.in, p.required])).toEqual([
      ["cursor", "query", false],
      ["limit", "query", false],
    ]);

    // Real requests and answers are valid against the document's schemas.
    const id = freshIdentity();
    const app = await TestApp.connect(id, "notes", { editor: { name: "Editor", current: () => ({ content: "state", title: "Editor" }) } });
    const agent = await app.createAgent("assistant", ["notes:editor"]);
    const frontend = await Frontend.for(id);
    const create = { agent, compaction: { contextWindow: 128000 } };
    expectValid(doc, "CreateConversationBody", create);
    const conversation = await frontend.json<{ id: string }>("POST", "/v1/conversations", create);
    expectValid(doc, "ConversationInfo", conversation);
    const turn = { turnId: "t1", agent, message: "hello", budget: { maxTokens: 4000 } };
    expectValid(doc, "TurnBody", turn);
    expectValid(doc, "TurnResult", await frontend.turn(conversation.id, turn));
    const append = { messages: [{ role: "assistant", content: "hi", refusal: null }], usage: { promptTokens: 10, completionTokens: 2 } };
    expectValid(doc, "AppendMessagesBody", append);
    expectValid(doc, "AppendResult", await frontend.json("POST", `/v1/conversations/${conversation.id}/messages`, append));
    expectValid(doc, "PastTurn", await frontend.json("GET", `/v1/conversations/${conversation.id}/turns/t1`));
    expectValid(doc, "ConversationPage", await frontend.json("GET", "/v1/conversations"));
    expectValid(doc, "MessagePage", await frontend.json("GET", `/v1/conversations/${conversation.id}/messages`));
    expectValid(doc, "EventPage", await frontend.json("GET", `/v1/conversations/${conversation.id}/events`));
    expectValid(doc, "AgentList", await frontend.json("GET", "/v1/agents"));
    expectValid(doc, "ProblemDocument", await (await frontend.request("GET", "/v1/conversations/nope")).json());
    // …and what the routes refuse, the schemas refuse too.
    expect(validatorFor(doc, "TurnBody").validate({ agent, message: "x", extra: 1 }).valid).toBe(false);
    expect(validatorFor(doc, "AppendMessagesBody").validate({ messages: [] }).valid).toBe(false);
  });
});
