import { withText, type ChatMessage } from "../protocol/messages";

/**
 * How long ago older messages were written, as the model reads them. Ages are
 * counted in calendar days (UTC), so every label in a prompt changes at the
 * same moment, midnight, and the cached prefix changes at most once a day.
 * Stored messages are never rewritten: the label is added to the model's view.
 */
const DAY_MS = 86_400_000;

/** Calendar days from the time `then` (ISO 8601) was written to `now`; parsed, not made into a Date: read by the thousand. */
export function daysBetween(then: string, now: Date): number {
  return Math.floor(now.getTime() / DAY_MS) - Math.floor(Date.parse(then) / DAY_MS);
}

export function ageLabel(days: number): string | null {
  if (days < 1) return null;
  if (days === 1) return "yesterday";
  if (days < 14) return `${days} days ago`;
  if (days < 60) return `${Math.floor(days / 7)} weeks ago`;
  if (days < 730) return `${Math.floor(days / 30)} months ago`;
  return `${Math.floor(days / 365)} years ago`;
}

/** User and assistant text from an earlier day, headed by when it was written; tool output and calls as they are. */
export function withAges(history: readonly { message: ChatMessage; createdAt: string }[], now: Date): ChatMessage[] {
  return history.map(({ message, createdAt }) => {
    if ((message.role !== "user" && message.role !== "assistant") || !message.content) return message;
    const label = ageLabel(daysBetween(createdAt, now));
    if (label === null) return message;
    const headed = (text: string) => `[written ${label}]\n${text}`;
    return message.role === "user" ? withText(message, headed) : { ...message, content: headed(message.content) };
  });
}
