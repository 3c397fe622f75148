/**
 * Drives a few turns against the local runtime and prints what the model would
 * read. Start the runtime first (`npm run dev`), then `npm run example:turns`.
 */
import { ContextClient } from "../src/sdk";
import type { TurnResult } from "../src/protocol/frontend";
import { devCredentials } from "./credentials";
import { createNotesApp } from "./notes-app";

const { url, apiKey, appTokens } = devCredentials();
const notes = createNotesApp({ url, token: appTokens.notes! });
const agent = await notes.start();
const client = new ContextClient({ url, apiKey });
const { id: conversation } = await client.createConversation({ agent });

function show(title: string, turn: TurnResult) {
  const last = turn.messages.at(-1)!;
  console.log(`\n━━ ${title} ━━ (turn ${turn.turnId.slice(0, 8)}, ${turn.messages.length} messages, ${turn.usage.total} tokens, contexts ${turn.usage.contexts})`);
  console.log(`last user message as the model reads it:\n${String(last.content).replace(/^/gm, "  │ ")}`);
  const { selected, omitted, removed } = turn.envelope.selection;
  console.log(`  selected: ${selected.map((s) => `${s.id} (${s.reason})`).join(", ") || "—"}`);
  console.log(`  omitted:  ${omitted.map((s) => `${s.id} (${s.reason})`).join(", ") || "—"}`);
  if (removed.length) console.log(`  removed:  ${removed.map((s) => `${s.id} (${s.reason})`).join(", ")}`);
  if (turn.missing.length) console.log(`  missing:  ${turn.missing.map((m) => `${m.id}: ${m.reason}`).join(", ")}`);
}

async function turn(title: string, message: string) {
  const result = await client.turn(conversation, { agent, message });
  show(title, result);
  await client.appendMessages(conversation, [{ role: "assistant", content: `(the model's answer to "${message}")` }]);
}

await turn("1. first turn: every attached context is injected", "What am I working on?");
await turn("2. nothing changed: nothing is injected again", "Anything else?");
notes.editor.moveCursor(3);
notes.editor.select("Write the protocol doc.");
await turn("3. the user moved and selected: editor state is updated", "Rewrite this sentence.");

const { items } = await client.browse(conversation, "notes:notes", { query: "milk" });
console.log(`\n+ menu: browsing notes:notes for "milk" → ${items.map((i) => `${i.title} (${i.id})`).join(", ")}`);
await client.attach(conversation, { context: "notes:notes", itemId: items[0]!.id });
await turn("4. the user attached a picked note", "Add bread to this list.");

const { fullId } = await notes.app.pushResource({ conversationId: conversation, id: "selection", title: "Current Selection", content: "<selection>versioned, diffed, and never twice</selection>", type: "note" });
await turn("5. the app pushed a session resource (Ask AI on a selection)", "Is this line any good?");

await client.detach(conversation, { context: "notes:notes", itemId: items[0]!.id });
await client.removeResource(conversation, fullId);
await turn("6. the user detached the note and removed the selection", "Thanks, that's all.");

await client.endConversation(conversation);
await notes.app.close();
console.log("\nconversation ended; its session resources were cleared.");
