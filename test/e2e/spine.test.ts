/**
 * The spine, end to end: an app on a real socket to `wrangler dev`, a frontend
 * over HTTP, both through the project's SDK.
 */
import { describe, expect, it } from "vitest";
import type { ContextProvider, TurnResult } from "../../src/sdk";
import { expectPrefix, freshIdentity, frontend, reminder, reminderOf, serialised, startApp, type Identity } from "./support";

interface Note {
  id: string;
  title: string;
  body: string;
  version: string;
}

/** A notes editor like examples/notes-app.ts: the open note (current only) and the notes (current, list, get). */
async function notesApp(id: Identity) {
  const notes = new Map<string, Note>(
    [
      { id: "groceries", title: "Groceries", body: "- oat milk\n- lemons\n- coffee beans", version: "g1" },
      { id: "q4-plan", title: "Q4 plan", body: "Ship the context runtime.\nMeasure turn latency.", version: "q1" },
      { id: "poem", title: "Draft poem", body: "The edge is where the context lives.", version: "p1" },
    ].map((n) => [n.id, n]),
  );
  const editor = { open: "q4-plan", line: 1 };
  const calls = { getById: [] as string[], getList: 0 };
  const contexts: ContextProvider[] = [
    {
      id: "editor-state",
      name: "Editor State",
      description: "The open note and the cursor",
      getCurrent: () => ({ title: "Editor State", content: `Open note: ${editor.open}\nCursor: line ${editor.line}` }),
    },
    {
      id: "notes",
      name: "Notes",
      description: "Browse and attach notes",
      getCurrent: () => ({ title: "Notes overview", content: [...notes.values()].map((n) => `- ${n.title} (${n.id})`).join("\n") }),
      getList: ({ query, offset, limit = 20 }) => {
        calls.getList += 1;
        const matches = [...notes.values()].filter((n) => !query || `${n.title} ${n.body}`.toLowerCase().includes(query.toLowerCase()));
        const page = matches.slice(offset, offset + limit);
        return { items: page.map((n) => ({ id: n.id, title: n.title, summary: n.body.split("\n")[0] })), hasMore: offset + limit < matches.length };
      },
      getById: (noteId) => {
        calls.getById.push(noteId);
        const note = notes.get(noteId);
        return note ? { title: note.title, content: note.body, version: note.version } : null;
      },
    },
  ];
  const app = await startApp(id, { name: "notes", contexts });
  const { agentId } = await app.createAgent({
    agentId: "assistant",
    name: "Notes Assistant",
    systemPrompt: "You are the Notes Assistant.",
    attachedContexts: ["notes:editor-state", "notes:notes"],
  });
  return { app, agent: agentId, editor, notes, calls };
}

describe("a notes app and a frontend, over real sockets", () => {
  it("injects new, skips unchanged, marks updated, attaches a picked note and removes it, keeping every prefix byte-stable", async () => {
    const id = freshIdentity();
    const { agent, editor, calls } = await notesApp(id);
    expect(agent).toBe("notes:assistant");
    const client = await frontend(id);
    const { providers } = await client.providers();
    expect(providers.map((p) => [p.id, p.methods, p.online])).toEqual([
      ["notes:editor-state", ["current"], true],
      ["notes:notes", ["current", "list", "get"], true],
    ]);
    const { id: conversation } = await client.createConversation({ agent });

    // Every turn: the previous turn plus the assistant's reply is a byte-identical prefix.
    let previous: string[] = [];
    let count = 0;
    async function turn(message: string): Promise<TurnResult> {
      const result = await client.turn(conversation, { agent, message });
      expectPrefix(previous, result);
      expect(result.messages).toHaveLength(previous.length === 0 ? 2 : previous.length + 1);
      expect(result.missing).toEqual([]);
      const last = result.messages.at(-1)!;
      expect(last.role).toBe("user");
      expect(String(last.content).startsWith(message)).toBe(true);
      const reply = { role: "assistant" as const, content: `reply ${++count}` };
      await client.appendMessages(conversation, [reply]);
      previous = [...serialised(result), JSON.stringify(reply)];
      return result;
    }

    const first = await turn("What am I working on?");
    expect(first.messages[0]).toMatchObject({ role: "system" });
    expect(String(first.messages[0]!.content)).toContain("You are the Notes Assistant.");
    // The system message names the nonce the runtime's own tags carry.
    const nonce = /nonce="([a-z0-9]{12})"/.exec(String(first.messages[0]!.content))?.[1];
    expect(String(first.messages.at(-1)!.content)).toContain(`\n\n<system_reminder nonce="${nonce}">\n[Context: Editor State]`);
    expect(reminderOf(first)).toBe(
      reminder(
        "[Context: Editor State]\nOpen note: q4-plan\nCursor: line 1",
        "[Context: Notes overview]\n- Groceries (groceries)\n- Q4 plan (q4-plan)\n- Draft poem (poem)",
      ),
    );
    expect(first.envelope.selection.selected).toEqual([
      { id: "notes:editor-state", reason: "first" },
      { id: "notes:notes", reason: "first" },
    ]);

    const unchanged = await turn("Anything else?");
    expect(reminderOf(unchanged)).toBe("");
    expect(unchanged.envelope.selection.omitted).toEqual([
      { id: "notes:editor-state", reason: "unchanged" },
      { id: "notes:notes", reason: "unchanged" },
    ]);

    editor.line = 7;
    const moved = await turn("Rewrite this line.");
    expect(reminderOf(moved)).toBe(reminder("[Context updated: Editor State]\nOpen note: q4-plan\nCursor: line 7"));

    // The + menu: browse (paged through the SDK's hasMore → nextCursor), pick, attach.
    const page1 = await client.browse(conversation, "notes:notes", { limit: 2 });
    expect(page1).toEqual({
      items: [
        { id: "groceries", title: "Groceries", summary: "- oat milk" },
        { id: "q4-plan", title: "Q4 plan", summary: "Ship the context runtime." },
      ],
      nextCursor: "2",
    });
    const page2 = await client.browse(conversation, "notes:notes", { limit: 2, cursor: page1.nextCursor });
    expect(page2).toEqual({ items: [{ id: "poem", title: "Draft poem", summary: "The edge is where the context lives." }] });
    const { items } = await client.browse(conversation, "notes:notes", { query: "milk" });
    expect(items.map((i) => i.id)).toEqual(["groceries"]);
    const attached = await client.attach(conversation, { context: "notes:notes", itemId: items[0]!.id });
    expect(attached.attachments).toEqual([expect.objectContaining({ context: "notes:notes", itemId: "groceries" })]);

    const withNote = await turn("Add bread to this list.");
    expect(reminderOf(withNote)).toBe(reminder("[Context: Groceries]\n- oat milk\n- lemons\n- coffee beans"));
    expect(calls.getById).toContain("groceries");

    const again = await turn("And butter.");
    expect(reminderOf(again)).toBe("");

    const detached = await client.detach(conversation, { context: "notes:notes", itemId: "groceries" });
    expect(detached.attachments).toEqual([]);
    const removed = await turn("Never mind the list.");
    expect(reminderOf(removed)).toBe(reminder("[Context removed: notes:notes#groceries]"));
    expect(removed.envelope.selection.removed).toEqual([{ id: "notes:notes#groceries", reason: "detached" }]);

    // History keeps each user message exactly as the model read it.
    const { messages: stored } = await client.messages(conversation);
    expect(stored.filter((m) => m.message.role === "user").map((m) => m.message)).toEqual(
      [first, unchanged, moved, withNote, again, removed].map((t) => t.messages.at(-1)),
    );
  });

  it("answers the same turnId twice with the same messages and stores one user message", async () => {
    const id = freshIdentity();
    const { agent, editor } = await notesApp(id);
    const client = await frontend(id);
    const { id: conversation } = await client.createConversation({ agent });
    const body = { turnId: "e2e-turn-1", agent, message: "only once" };

    const [a, b] = await Promise.all([client.turn(conversation, body), client.turn(conversation, body)]);
    editor.line = 42; // a replay answers from what was stored, not from a fresh pull
    const c = await client.turn(conversation, body);
    expect(b.messages).toEqual(a.messages);
    expect(c.messages).toEqual(a.messages);
    expect(JSON.stringify(c.messages)).toBe(JSON.stringify(a.messages));
    expect([a, b, c].map((t) => t.turnId)).toEqual(["e2e-turn-1", "e2e-turn-1", "e2e-turn-1"]);
    expect([a.replayed, b.replayed, c.replayed].filter(Boolean)).toHaveLength(2);
    expect(c.replayed).toBe(true);

    const { messages } = await client.messages(conversation);
    expect(messages.map((m) => [m.message.role, m.turnId])).toEqual([["user", "e2e-turn-1"]]);

    // A fresh turn after the replay sees the change once.
    const next = await client.turn(conversation, { agent, message: "and now?" });
    expect(reminderOf(next)).toBe(reminder("[Context updated: Editor State]\nOpen note: q4-plan\nCursor: line 42"));
    expect(next.messages.slice(0, a.messages.length)).toEqual(a.messages);
  });
});
