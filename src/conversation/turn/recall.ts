import { ok, type Result } from "../../core/problem";
import type { TurnSections } from "../turn-sections";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

export interface Recalled {
  /** Memory recalled for the user's message and the task state the turn carries (none on a continuation). */
  extra: TurnSections;
}

/** Memory (KV) and task state (R2 pointers) for the appendix; a memory that cannot be read is missing, not a failed turn. */
export async function recall(d: Loaded & Pulled): Promise<Result<Staged<Recalled>>> {
  const extra: TurnSections = !d.continuation && d.deps.sections ? await d.deps.sections(d.agent) : { sections: [], omitted: [] };
  const entries = (kind: string) => extra.sections.filter((s) => s.kind === kind).reduce((n, s) => n + s.entries.length, 0);
  return ok({
    out: { extra },
    decided: { memories: entries("memory"), taskState: entries("task_state"), omitted: extra.omitted.length, ...(extra.memoryError ? { memoryError: extra.memoryError } : {}) },
  });
}
