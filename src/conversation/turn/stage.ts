import type { StageRecord } from "../../protocol/evidence";
import { ok, type Result } from "../../core/problem";

export type { StageRecord };
/** What a stage decided, in a few figures or names: the evidence's account of the turn's pipeline. */
export type Decision = StageRecord["decided"];

/** A stage's output: what it adds to the draft, and what it decided. */
export interface Staged<Out> {
  out: Out;
  decided: Decision;
}

/**
 * Runs a turn's stages one after another over a growing draft: each stage reads what the earlier ones added and adds
 * its own part. A refusal stops the turn there; the trace is what the evidence records.
 */
export class StageTrace {
  readonly records: StageRecord[] = [];

  async run<In extends object, Out extends object>(
    name: string,
    draft: In,
    stage: (draft: In) => Promise<Result<Staged<Out>>> | Result<Staged<Out>>,
  ): Promise<Result<In & Out>> {
    const started = performance.now();
    const staged = await stage(draft);
    if (!staged.ok) return staged;
    this.records.push({ stage: name, ms: Math.round((performance.now() - started) * 100) / 100, decided: staged.value.decided });
    return ok({ ...draft, ...staged.value.out });
  }
}
