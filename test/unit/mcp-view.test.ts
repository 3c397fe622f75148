/**
 * An agent's view as an MCP session reads it (src/conversation/mcp-view.ts), in Node over a scope of fakes: which
 * contexts are resources, how a list pages through the browsable providers, what may be read, the URIs' round trip.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentView } from "../../src/conversation/mcp-view";
import type { McpSession } from "../../src/conversation/mcp-session-store";
import { contextUri, parseContextUri } from "../../src/mcp/serve/uris";
import { agentInfo, fakeConversation, provider } from "./support/fake-scope";

const session: McpSession = { sessionId: "c-1.0123456789abcdef0123456789abcdef", agent: "notes:assistant", protocolVersion: "2025-11-25", client: { name: "t", version: "1" }, createdAt: "2025-03-01T09:00:00.000Z" };

async function view(fields: Parameters<typeof agentInfo>[0]) {
  const conversation = await fakeConversation();
  const { apps } = conversation;
  apps.addAgent(agentInfo(fields));
  apps.addProvider(provider("notes:editor", { current: () => ({ content: "draft" }) }));
  apps.addProvider(provider("docs:resources", { get: (id) => (id === "file:///guide.md" ? { content: "# Guide" } : null), list: () => ({ items: [{ id: "file:///guide.md", title: "Guide" }] }) }));
  apps.addProvider(provider("mail:inbox", { list: () => ({ items: [{ id: "m1", title: "Hello" }], nextCursor: "page-2" }), get: () => ({ content: "a mail" }) }));
  const toolbox = apps.toolbox(fields.id)!;
  return { conversation, view: agentView(conversation.scope(), session, toolbox, { toolsChanged: () => undefined }) };
}

describe("an agent's view over MCP", () => {
  it("serves an MCP server's pinned resource (server:uri) as the item uri of server:resources", async () => {
    const { view: v } = await view({ id: "notes:assistant", attachedContexts: ["notes:editor", "docs:file:///guide.md"] });
    const page = await v.resources(undefined);
    expect(page.ok && page.value.resources.map((r) => r.uri)).toEqual(["ctx://notes/editor", "ctx://docs/resources/file%3A%2F%2F%2Fguide.md"]);
    const read = await v.read("ctx://docs/resources/file%3A%2F%2F%2Fguide.md");
    expect(read.ok && read.value.text).toBe("# Guide");
  });

  it("pages through each browsable provider in turn, and refuses a cursor it never issued", async () => {
    const { view: v } = await view({ id: "notes:assistant", attachedContexts: ["notes:editor"], browseContexts: true });
    const first = await v.resources(undefined);
    if (!first.ok) throw new Error(first.problem.detail);
    expect(first.value.resources.map((r) => r.uri)).toEqual(["ctx://notes/editor", "ctx://docs/resources/file%3A%2F%2F%2Fguide.md"]);
    const second = await v.resources(first.value.nextCursor);
    if (!second.ok) throw new Error(second.problem.detail);
    expect(second.value.resources.map((r) => r.uri)).toEqual(["ctx://mail/inbox/m1"]);
    expect(second.value.nextCursor).toBeDefined();
    const forged = await v.resources("bm90IGEgY3Vyc29y");
    expect(!forged.ok && forged.problem.type).toBe("invalid-request");
  });

  it("reads only what the agent may: attached contexts, and a browsing agent's providers by their methods", async () => {
    const closed = (await view({ id: "notes:assistant", attachedContexts: ["notes:editor"] })).view;
    expect((await closed.read("ctx://mail/inbox/m1")).ok).toBe(false);
    const open = (await view({ id: "notes:assistant", browseContexts: true })).view;
    expect((await open.read("ctx://mail/inbox/m1")).ok).toBe(true);
    // mail:inbox has no getCurrent: its current state is no resource.
    const current = await open.read("ctx://mail/inbox");
    expect(!current.ok && current.problem.type).toBe("not-found");
  });
});

describe("ctx:// URIs", () => {
  it("round-trip every provider ref and item id", () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/);
    fc.assert(
      fc.property(name, name, fc.option(fc.string({ minLength: 1, maxLength: 256 }), { nil: undefined }), (app, providerName, itemId) => {
        const ref = `${app}:${providerName}`;
        expect(parseContextUri(contextUri(ref, itemId))).toEqual(itemId === undefined ? { ref } : { ref, itemId });
      }),
    );
  });

  it("refuses URIs it never issues", () => {
    for (const uri of ["file:///etc/passwd", "ctx://notes", "ctx://no tes/x", "ctx://a/b/c/d", "ctx://a/b/%E0%A4%A", "ctx://a/b/"]) expect(parseContextUri(uri)).toBeNull();
  });
});
