/**
 * Drives a few turns against the local runtime and prints what the model would
 * read, then a tool round trip: a scripted model's tool call, sent as the next
 * turn's `reply`, run on the app by the runtime. Start the runtime first
 * (`npm run dev`), then `npm run example:turns`.
 */
import type { ChatCompletionMessage } from "openai/resources/chat/completions";
import { ContextClient } from "../src/sdk";
import type { TurnResult } from "../src/protocol/frontend";
import { devCredentials } from "./credentials";
import { createNotesApp } from "./notes-app";

const { url, apiKey, appTokens } = devCredentials();
const notes = createNotesApp({ url, token: appTokens.notes! });
const agent = await notes.start();
let requests = 0; // the frontend's HTTP requests, counted for step 7
const client = new ContextClient({ url, apiKey, fetch: (input, init) => (requests++, fetch(input, init)) });
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

// 7. The model answers with a tool call. Here a scripted "model" stands in for
// `(await openai.chat.completions.create({ model, messages: turn.messages, tools: turn.tools })).choices[0].message`:
// the message is shaped exactly as the official client returns it, and goes, as it came, in the next turn's `reply`.
await client.turn(conversation, { agent, message: "Which of my notes mention latency?" });
const modelMessage: ChatCompletionMessage = {
  role: "assistant",
  content: null,
  refusal: null,
  annotations: [],
  tool_calls: [{ id: "call_7Tq2xKp9", type: "function", function: { name: "notes__search", arguments: '{"query":"latency"}' } }],
};
const call = modelMessage.tool_calls![0]!;
const [calledBefore, requestsBefore] = [notes.toolCalls.length, requests];
const ran = await client.turn(conversation, { agent, reply: modelMessage });
console.log(`\n━━ 7. the model called a tool: the runtime ran it on the app ━━ (turn ${ran.turnId.slice(0, 8)}, ${ran.messages.length} messages, ${ran.usage.total} tokens, tools ${ran.usage.tools})`);
console.log(`the user asked "Which of my notes mention latency?"; the scripted model answered with a tool call, sent as the next turn's reply:`);
console.log(`  → ${call.type === "function" ? `${call.function.name} ${call.function.arguments}` : call.type} (${call.id})`);
console.log(`${requests - requestsBefore} request: the runtime ran it on the app and returned the next model input`);
for (const c of notes.toolCalls.slice(calledBefore)) console.log(`  app ran:  ${c.tool} ${JSON.stringify(c.args)} (${c.toolCallId})`);
for (const r of ran.envelope.tools?.ran ?? []) console.log(`  evidence: ${r.tool} → ${r.servedBy} (${r.outcome})`);
const result = ran.messages.at(-1)!;
console.log(`the tool result as the model reads it:\n${String(result.content).replace(/^/gm, "  │ ")}`);
console.log(`  tools:    ${ran.tools?.map((t) => t.function.name).join(", ") || "—"}`);
console.log(`  usage.tools: ${ran.usage.tools} tokens`);

await client.endConversation(conversation);
await notes.app.close();
console.log("\nconversation ended; its session resources were cleared.");
