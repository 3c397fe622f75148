import { ok, type Result } from "../../core/problem";
import { hooksAt, runChain } from "../../hooks/chain";
import { admitText } from "../../protect";
import type { AppendixSection } from "../../core/assemble";
import { turnSections, type TurnSections } from "../turn-sections";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

export interface Recalled {
  /** Memory recalled for the user's message and the task state the turn carries (none on a continuation). */
  extra: TurnSections;
}

/**
 * Memory (KV) and task state (R2 pointers) for the appendix; a memory that cannot be read is missing, not a failed turn.
 * The `memory` hooks then filter what was recalled and may supply entries of their own (docs/hooks.md).
 */
export async function recall(d: Loaded & Pulled): Promise<Result<Staged<Recalled>>> {
  const read: TurnSections = d.continuation ? { sections: [], omitted: [] } : await sections(d);
  const extra = d.continuation ? read : await hookMemory(d, read);
  const entries = (kind: string) => extra.sections.filter((s) => s.kind === kind).reduce((n, s) => n + s.entries.length, 0);
  return ok({
    out: { extra },
    decided: { memories: entries("memory"), taskState: entries("task_state"), omitted: extra.omitted.length, ...(extra.memoryError ? { memoryError: extra.memoryError } : {}) },
  });
}

/** The turn's own sections (memory read for the user's words as the input hooks left them, task state), and any the caller adds. */
async function sections(d: Loaded & Pulled): Promise<TurnSections> {
  const { scope, options } = d;
  const own = await turnSections(scope, { body: d.body, nonce: d.nonce, agent: d.agent, message: d.body.message });
  return options.more ? options.more(d.nonce, own) : own;
}

type Entry = AppendixSection["entries"][number];

async function hookMemory(d: Loaded & Pulled, read: TurnSections): Promise<TurnSections> {
  const section = read.sections.find((s) => s.kind === "memory");
  // Hooks see memory only for an agent that reads it: a memory section is there (empty when nothing was recalled).
  if (!section || hooksAt(d.hooks.hooks, "memory").length === 0) return read;
  const outcome = await runChain(d.hooks, "memory", section.entries, {
    payload: (entries) => ({ message: d.body.message ?? "", memory: entries.map((e) => ({ id: e.id, text: e.text })) }),
    apply: (entries, decision, hook) => {
      if (decision.action !== "change") return { state: entries };
      const keep = decision.keep === undefined ? entries : entries.filter((e) => decision.keep!.includes(e.id));
      // What a hook supplies is text from outside: it passes the trust boundary before the fence holds it.
      const added = (decision.add ?? []).map((text, i): Entry => ({ id: `${hook.id}#${entries.length + i}`, text: admitText(text, { nonce: d.nonce }).text }));
      return { state: [...keep, ...added] };
    },
    // Failing closed, the turn goes on without memory rather than with memory the hook did not see.
    closed: () => ({ action: "change", keep: [] }),
  });
  const dropped = section.entries.filter((e) => !outcome.state.some((k) => k.id === e.id)).map((e) => ({ id: `memory:${e.id}`, reason: "hook" as const }));
  return { ...read, sections: read.sections.map((s) => (s === section ? { ...s, entries: outcome.state } : s)), omitted: [...read.omitted, ...dropped] };
}
