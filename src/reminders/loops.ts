/**
 * The loop detector: pure, over the conversation's recent tool calls in the order they were made. A loop is the same
 * call — tool, normalised arguments and result alike — made `repeats` times in a row, or a short cycle of calls
 * (A-B-A-B, period up to `maxPeriod`) repeated `repeats` times. Polling whose results change, retries with changed
 * arguments and paging (a cursor that advances) never repeat a whole fingerprint, so they are never loops.
 */

/** One call as the detector reads it: the tool's name, its arguments as the model wrote them, and its result (null: none yet). */
export interface CallRecord {
  name: string;
  args: string;
  result: string | null;
}

export interface LoopOptions {
  /** How many times the call or cycle repeats before it is a loop (default 3); 0 finds none. */
  repeats: number;
  /** The longest cycle counted (default 3). */
  maxPeriod: number;
}

export const LOOP_DEFAULTS: LoopOptions = { repeats: 3, maxPeriod: 3 };

/** One loop: the calls it spans (`start`..`end`, inclusive), where it reached `repeats` (`firedAt`), its period and its tools. */
export interface Loop {
  start: number;
  end: number;
  firedAt: number;
  period: number;
  /** The tools of one cycle, in order (one name for a plain repeat). */
  tools: string[];
  /** Whole repetitions the run holds. */
  repeats: number;
}

/** The value with every object's keys sorted, no whitespace; numbers as JSON numbers (1.0 and 1 alike). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Arguments canonicalised when they parse as JSON; otherwise trimmed as they are. An empty string is `{}`. */
export function canonicalArgs(args: string): string {
  const trimmed = args.trim();
  if (trimmed === "") return "{}";
  try {
    return canonicalJson(JSON.parse(trimmed));
  } catch {
    return trimmed;
  }
}

/** What makes two calls the same: tool, canonical arguments, result (whitespace at its ends aside). */
export function fingerprint(call: CallRecord): string {
  return JSON.stringify([call.name, canonicalArgs(call.args), call.result === null ? null : call.result.trim()]);
}

/**
 * The loops in a sequence of calls, in the order they reached their threshold. A run that goes on is one loop, however
 * long; a run broken and started again is another. A run of one call repeated is counted at period 1 only, never again
 * as a longer cycle.
 */
export function findLoops(calls: readonly CallRecord[], options: Partial<LoopOptions> = {}): Loop[] {
  const { repeats, maxPeriod } = { ...LOOP_DEFAULTS, ...options };
  if (repeats < 2) return [];
  const fps = calls.map(fingerprint);
  const loops: Loop[] = [];
  for (let period = 1; period <= maxPeriod; period++) {
    let start = 0;
    for (let j = period; j <= fps.length; j++) {
      if (j < fps.length && fps[j] === fps[j - period]) continue;
      // The run [start, j - 1] is periodic with this period.
      const length = j - start;
      if (length >= period * repeats) {
        const block = fps.slice(start, start + period);
        const firedAt = start + period * repeats - 1;
        // A block that repeats within itself (A-A, A-B-A-B) is a shorter period's loop.
        const primitive = !Array.from({ length: period - 1 }, (_, i) => i + 1).some((q) => period % q === 0 && block.every((f, i) => f === block[i % q]));
        const covered = loops.some((l) => firedAt >= l.start && firedAt <= l.end);
        if (primitive && !covered) {
          loops.push({ start, end: j - 1, firedAt, period, tools: calls.slice(start, start + period).map((c) => c.name), repeats: Math.floor(length / period) });
        }
      }
      // The next run starts period calls back from the break: those calls are trivially periodic.
      start = j - period + 1;
    }
  }
  return loops.sort((a, b) => a.firedAt - b.firedAt);
}
