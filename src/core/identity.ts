/**
 * The identity block: the system message a conversation keeps from its first
 * turn to its last, so the front of every prompt stays byte-stable and a
 * provider can cache it. It holds the persona and when the conversation
 * started, rounded to a part of the day (a clock would change every turn).
 * A later switch of persona is a note on the user's message, not a new block.
 */
import { nonceNotice, openTag } from "./runtime-tag";

const PARTS_OF_DAY = [
  { from: 0, name: "night" },
  { from: 5, name: "morning" },
  { from: 12, name: "afternoon" },
  { from: 17, name: "evening" },
  { from: 22, name: "night" },
] as const;

export function partOfDay(at: Date): string {
  const hour = at.getUTCHours();
  return PARTS_OF_DAY.filter((p) => hour >= p.from).at(-1)!.name;
}

export function renderIdentity(systemPrompt: string, startedAt: Date, nonce?: string | null): string {
  const day = startedAt.toISOString().slice(0, 10);
  const weekday = startedAt.toLocaleDateString("en-US", { weekday: "long", timeZone: "UTC" });
  const started = `This conversation started on ${weekday}, ${day}, in the ${partOfDay(startedAt)} (UTC).`;
  const runtime = nonce ? `${started}\n${nonceNotice(nonce)}` : started;
  return systemPrompt === "" ? runtime : `${systemPrompt}\n\n${runtime}`;
}

/**
 * Tells the model, on the message where it happens, to take on another agent's persona from now on. The agent's
 * name and prompt come from an app: the caller passes them through the trust boundary first.
 */
export function renderPersonaSwitch(agent: { name: string; systemPrompt: string }, nonce?: string | null): string {
  const adopt = `From this message on you are ${agent.name}: adopt this role now, in place of the one you had.`;
  return `${openTag("persona_switch", nonce)}\n${agent.systemPrompt === "" ? adopt : `${adopt}\n${agent.systemPrompt}`}\n</persona_switch>`;
}
