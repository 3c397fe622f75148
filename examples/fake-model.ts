/**
 * The examples' fake model: an OpenAI-compatible upstream that answers by three rules, a function of the request it
 * receives (no network, no key):
 *   - the last message is a tool result: answer with a sentence quoting it;
 *   - the tools offer `notes__search` and the user asks which notes mention something: call it with those words;
 *   - otherwise: say what it was told (the user's words, and the contexts injected with them).
 * `npm run example:gateway` starts it for one run; `npm run fake-model` keeps it on a fixed port for `npm run dev`.
 */
import type { ChatRequest, ScriptedReply } from "../test/e2e/fake-openai";

export interface Message {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A message's text (a string, or the text parts of a list). */
export function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : "")).join("");
  return "";
}

/** The user's own words: the message without the runtime's `<system_reminder>` block. */
function userWords(content: unknown): string {
  return text(content).replace(/\s*<system_reminder[\s\S]*?<\/system_reminder>\s*/g, " ").trim();
}

/** The fake model's rules: a function of the request it receives. */
export function fakeModel(request: ChatRequest): ScriptedReply {
  const messages = request.messages as Message[];
  const last = messages.at(-1);
  if (last?.role === "tool") return { text: `Your notes say: ${text(last.content).trim()}` };
  const user = [...messages].reverse().find((m) => m.role === "user");
  const words = userWords(user?.content);
  const tools = (request.tools ?? []).map((t) => (t as { function?: { name?: string } }).function?.name);
  const asked = /\bnotes?\b.*?\b(?:mention|about|say about)\s+(.+?)\??$/i.exec(words);
  if (tools.includes("notes__search") && asked?.[1]) return { toolCalls: [{ name: "notes__search", arguments: { query: asked[1] } }] };
  const contexts = [...text(user?.content).matchAll(/^\[Context( updated)?: ([^\]]+)\]$/gm)].map((m) => (m[1] ? `${m[2]} (updated)` : m[2]));
  return { text: `You said "${words}"${contexts.length ? `, and I was shown ${contexts.length === 1 ? "this context" : "these contexts"}: ${contexts.join(", ")}` : ""}.` };
}
