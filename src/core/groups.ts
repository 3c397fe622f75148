import type { ChatMessage } from "../protocol/messages";

/**
 * History as whole groups: a user message; an assistant reply; or an
 * assistant's tool calls with every result that answers them. Whatever trims
 * history works on groups, so a tool result is never separated from its call.
 */
export interface MessageGroup {
  kind: "user" | "assistant" | "tool_calls";
  /** Index of the group's first message in the history. */
  start: number;
  messages: ChatMessage[];
}

export function groupMessages(history: readonly ChatMessage[]): MessageGroup[] {
  const groups: MessageGroup[] = [];
  let calls: MessageGroup | null = null;
  let open = new Set<string>();
  history.forEach((message, index) => {
    if (message.role === "tool" && calls && open.has(message.tool_call_id)) {
      calls.messages.push(message);
      open.delete(message.tool_call_id);
      return;
    }
    calls = null;
    if (message.role === "assistant" && message.tool_calls?.length) {
      calls = { kind: "tool_calls", start: index, messages: [message] };
      open = new Set(message.tool_calls.map((c) => c.id));
      groups.push(calls);
      return;
    }
    // A stray tool message or a system note stands alone; the store never writes either, but history may be resumed from elsewhere.
    groups.push({ kind: message.role === "user" ? "user" : "assistant", start: index, messages: [message] });
  });
  return groups;
}

/**
 * What breaks the pairing rules every provider enforces: a tool result must
 * follow the call it answers (after its siblings only), and every call must be
 * answered before anything else is said. A trailing group may still wait for
 * results when `pendingAllowed`. Empty means the history is well-formed.
 */
export function pairingProblems(history: readonly ChatMessage[], options: { pendingAllowed?: boolean } = {}): string[] {
  const problems: string[] = [];
  let open: Set<string> | null = null;
  let openAt = -1;
  history.forEach((message, index) => {
    if (message.role === "tool") {
      if (!open?.delete(message.tool_call_id)) {
        problems.push(`messages.${index}: a tool result for '${message.tool_call_id}' answers no call just before it (unknown, already answered, or too late)`);
      }
      return;
    }
    if (open?.size) problems.push(`messages.${openAt}: ${[...open].join(", ")} not answered before messages.${index}`);
    if (message.role === "system" && index > 0) problems.push(`messages.${index}: a system message after the first`);
    open = message.role === "assistant" && message.tool_calls?.length ? new Set(message.tool_calls.map((c) => c.id)) : null;
    openAt = index;
  });
  const last = open as Set<string> | null;
  if (last?.size && !options.pendingAllowed) problems.push(`messages.${openAt}: ${[...last].join(", ")} never answered`);
  return problems;
}
