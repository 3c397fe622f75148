import { ok, type Result } from "../../core/problem";
import type { Identified } from "./identify";
import type { Staged } from "./stage";

export interface Reminder {
  kind: "persona";
  text: string;
}

export interface Reminded {
  /** Notes stapled to the user's message, first in its appendix, in this order; class 0 like the message. */
  reminders: Reminder[];
}

/** The notes the runtime staples to the user's message: who took over the conversation. */
export function remind(d: Identified): Result<Staged<Reminded>> {
  const reminders: Reminder[] = d.personaNote ? [{ kind: "persona", text: d.personaNote }] : [];
  return ok({ out: { reminders }, decided: { kinds: reminders.map((r) => r.kind) } });
}
