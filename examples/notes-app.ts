/**
 * An example app: a notes editor exposing two context providers, the way
 * sanqian-notes does:
 *   editor-state — getCurrent only: the open note, cursor and selection
 *   notes        — getCurrent (an overview), getList (browse) and getById (one note)
 * a read-only `search` tool (notes by the words in them), a `weekly-review` skill,
 * and an "assistant" agent that attaches both providers, binds `search` and names the skill.
 *
 * Run it on its own (`npm run example:notes`) to keep it connected while you
 * call the HTTP API yourself; examples/drive-turns.ts starts it in-process.
 */
import { pathToFileURL } from "node:url";
import { ContextApp } from "../src/sdk";
import { devCredentials } from "./credentials";

interface Note {
  id: string;
  title: string;
  body: string;
  updatedAt: string;
}

export function createNotesApp(options: { url: string; token: string }) {
  const notes = new Map<string, Note>(
    [
      { id: "groceries", title: "Groceries", body: "- oat milk\n- lemons\n- coffee beans" },
      { id: "q4-plan", title: "Q4 plan", body: "Ship the context runtime.\nMeasure turn latency.\nWrite the protocol doc." },
      { id: "poem", title: "Draft poem", body: "The edge is where the context lives,\nversioned, diffed, and never twice." },
    ].map((n) => [n.id, { ...n, updatedAt: "2026-11-20T09:00:00Z" }]),
  );
  const editor = { openNoteId: "q4-plan", cursorLine: 1, selection: "" };
  /** Every tool call the runtime sent this app, in order. */
  const toolCalls: { tool: string; args: Record<string, unknown>; toolCallId: string }[] = [];

  /** The notes whose title or body holds every word of the query (case-insensitive), one line each. */
  function searchNotes(query: string): string {
    const words = query.toLowerCase().split(/\W+/).filter(Boolean);
    const hits = [...notes.values()].filter((n) => words.length > 0 && words.every((w) => `${n.title}\n${n.body}`.toLowerCase().includes(w)));
    if (!hits.length) return `No notes match "${query}".`;
    return hits
      .map((n) => {
        const line = n.body.split("\n").find((l) => words.some((w) => l.toLowerCase().includes(w))) ?? n.body.split("\n")[0];
        return `- ${n.title} (${n.id}), updated ${n.updatedAt}: ${line}`;
      })
      .join("\n");
  }

  const app = new ContextApp({
    url: options.url,
    token: options.token,
    app: { name: "notes", version: "1.0.0", displayName: "Notes" },
    contexts: [
      {
        id: "editor-state",
        name: "Editor State",
        description: "Current note, cursor position, and selection",
        getCurrent: async () => {
          const note = notes.get(editor.openNoteId);
          if (!note) return null;
          const selection = editor.selection ? `\nSelection: "${editor.selection}"` : "";
          return { title: "Editor State", content: `Open note: ${note.title} (${note.id})\nCursor: line ${editor.cursorLine}${selection}` };
        },
      },
      {
        id: "notes",
        name: "Notes",
        description: "Browse and attach notes",
        getCurrent: async () => ({
          title: "Notes overview",
          content: [...notes.values()].map((n) => `- ${n.title} (${n.id}), updated ${n.updatedAt}`).join("\n"),
        }),
        getList: async ({ query, offset = 0, limit = 20 }) => {
          const matches = [...notes.values()].filter((n) => !query || `${n.title} ${n.body}`.toLowerCase().includes(query.toLowerCase()));
          const page = matches.slice(offset, offset + limit);
          return { items: page.map((n) => ({ id: n.id, title: n.title, summary: n.body.split("\n")[0] })), hasMore: offset + limit < matches.length };
        },
        getById: async (id) => {
          const note = notes.get(id);
          return note ? { title: note.title, content: note.body, version: note.updatedAt } : null;
        },
      },
    ],
    tools: [
      {
        name: "search",
        description: "Search the user's notes by words in their title or text; returns each matching note's id, title and a matching line.",
        inputSchema: { type: "object", properties: { query: { type: "string", description: "Words that must all appear in the note" } }, required: ["query"] },
        annotations: { readOnlyHint: true },
        handler: async (args, { toolCallId }) => {
          toolCalls.push({ tool: "search", args, toolCallId });
          return searchNotes(String(args.query));
        },
      },
    ],
    skills: [
      {
        name: "weekly-review",
        description: "How to review the week's notes: what changed, what is still open, what comes next.",
        manual: [
          "# Weekly review",
          "",
          "1. Read the notes overview: every note updated in the last seven days is part of the review.",
          "2. For each, say in one line what changed. Use notes__search to find open items (words such as \"todo\", \"ship\", \"write\").",
          "3. List what is still open, oldest first, and ask the user which to carry into next week.",
          "4. Keep it short: bullet points, no more than ten lines, in the user's words.",
        ].join("\n"),
      },
    ],
  });

  return {
    app,
    toolCalls,
    /** Connects and registers the assistant agent; resolves to its full id, "notes:assistant". */
    async start(): Promise<string> {
      await app.connect();
      const { agentId } = await app.createAgent({
        agentId: "assistant",
        name: "Notes Assistant",
        systemPrompt: "You are the Notes Assistant. You help the user write and organise their notes.",
        tools: ["search"],
        skills: ["notes:weekly-review"],
        attachedContexts: ["notes:editor-state", "notes:notes"],
        memory: true,
      });
      return agentId;
    },
    /** What the user does in the editor between turns. */
    editor: {
      moveCursor(line: number) {
        editor.cursorLine = line;
      },
      select(text: string) {
        editor.selection = text;
      },
      open(noteId: string) {
        editor.openNoteId = noteId;
        editor.cursorLine = 1;
        editor.selection = "";
      },
      edit(noteId: string, body: string) {
        const note = notes.get(noteId);
        if (note) notes.set(noteId, { ...note, body, updatedAt: new Date().toISOString() });
      },
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { url, appTokens } = devCredentials();
  const notes = createNotesApp({ url, token: appTokens.notes! });
  notes.app.on("registered", () => console.log("notes app registered with", url));
  notes.app.on("disconnected", (e) => console.log("disconnected", e));
  console.log("agent", await notes.start(), "is ready; Ctrl-C to stop");
}
