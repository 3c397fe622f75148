/**
 * The loop detector: pure, over the conversation's recent tool calls in the order they were made. A loop is calls
 * wasted by repeating: the same call — tool, normalised arguments and result alike — again and again, a short cycle of
 * calls (A-B-A-B, period up to `maxPeriod`), or a parallel batch made again whole. It is counted by the calls it
 * wasted, so A-B-A-B (two wasted) weighs what one call made three times does. Polling whose state changes, retries
 * with changed arguments and paging (a cursor that advances) never repeat a whole fingerprint, so they are never loops.
 */

import { NAMED_DATES } from "../core/date-shapes";

/** One call as the detector reads it: the tool's name, its arguments as the model wrote them, and its result (null: none yet). */
export interface CallRecord {
  name: string;
  args: string;
  result: string | null;
  /** The assistant message that made it: calls of one message are a parallel batch, compared in any order. */
  message?: number;
}

export interface LoopOptions {
  /**
   * How many times one call repeats before it is a loop (default 3): a loop has wasted `repeats - 1` calls, and a
   * cycle or batch must also repeat once whole. 0 or 1 finds none.
   */
  repeats: number;
  /** The longest cycle counted (default 3); a repeated batch counts whatever its size. */
  maxPeriod: number;
}

export const LOOP_DEFAULTS: LoopOptions = { repeats: 3, maxPeriod: 3 };

/** One loop: the calls it spans (`start`..`end`, inclusive), the call that made it one (`firedAt`), its period and its tools. */
export interface Loop {
  start: number;
  end: number;
  firedAt: number;
  period: number;
  /** The tools of one cycle, in order (one name for a plain repeat). */
  tools: string[];
  /** Whole repetitions the run holds. */
  repeats: number;
  /** Calls made again with nothing new learned: the run's length less one cycle. */
  wasted: number;
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

/** Arguments canonicalised when they parse as JSON; otherwise with runs of white space made one. An empty string is `{}`. */
export function canonicalArgs(args: string): string {
  const trimmed = args.trim();
  if (trimmed === "") return "{}";
  try {
    return canonicalJson(JSON.parse(trimmed));
  } catch {
    return trimmed.replace(/\s+/g, " ");
  }
}

/**
 * What names a moment or one occurrence rather than an outcome: timestamps, clock times, elapsed durations, epoch
 * seconds, UUIDs, and dates written with a month's or a weekday's name (`NAMED_DATES`). The same error at another time
 * is the same error; a state, a count or a percentage that changed is a change.
 */
const OCCURRENCE = new RegExp(
  [
    /\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/.source,
    /\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/.source,
    /\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds|min|mins|minutes)\b/.source,
    /\b1\d{9}(?:\d{3})?\b/.source,
    /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/.source,
  ].join("|"),
  "gi",
);

/**
 * An id minted for one occurrence (a request id, a trace id): a word of 8 characters or more whose letters and
 * digits alternate at least four times, as random ids do and names ("order_1051", "utf8", "sha256sum") do not.
 */
function mintedId(word: string): boolean {
  let changes = 0;
  for (let i = 1; i < word.length; i++) if (/\d/.test(word[i]!) !== /\d/.test(word[i - 1]!) && /[a-z\d]/i.test(word[i]!) && /[a-z\d]/i.test(word[i - 1]!)) changes++;
  return changes >= 4;
}

/** A result as compared: occurrence marks masked, white space at its ends aside; a result that is only marks (a clock's) is its own outcome. */
export function canonicalResult(result: string): string {
  const trimmed = result.trim();
  const masked = trimmed
    .replace(NAMED_DATES, "·")
    .replace(OCCURRENCE, "·")
    .replace(/[\w-]{8,}/g, (word) => (mintedId(word) ? "·" : word));
  return /[\p{L}\p{N}]/u.test(masked) ? masked : trimmed;
}

/** What makes two calls the same: tool, canonical arguments, canonical result. */
export function fingerprint(call: CallRecord): string {
  return JSON.stringify([call.name, canonicalArgs(call.args), call.result === null ? null : canonicalResult(call.result)]);
}

/**
 * The loops in a sequence of calls, in the order they became loops. A batch has no order of its own: for a repeat of
 * one call, each batch is read lined up with its neighbours ([A, X] then [A] then [A] is A three times in a row); for
 * a cycle, each batch is read sorted, so a batch made again in another order is the same batch, and one made again
 * in part (polling several things, one of which changed) is no cycle of the part that did not change. A run that goes
 * on is one loop, however long; a run broken and started again is another. A run of one call repeated is counted at
 * period 1 only, never again as a longer cycle. Positions in the answer are the caller's.
 */
export function findLoops(calls: readonly CallRecord[], options: Partial<LoopOptions> = {}): Loop[] {
  const { repeats, maxPeriod } = { ...LOOP_DEFAULTS, ...options };
  if (repeats < 2) return [];
  const prints = calls.map(fingerprint);
  const batches = batchesOf(calls);
  const found: Loop[] = [];
  const scan = (order: readonly number[], periods: readonly number[]) => {
    const fps = order.map((i) => prints[i]!);
    const batchAt = batchStarts(order.map((i) => calls[i]!.message));
    for (const period of periods) {
      let start = 0;
      for (let j = period; j <= fps.length; j++) {
        if (j < fps.length && fps[j] === fps[j - period]) continue;
        // The run [start, j - 1] is periodic with this period. Past maxPeriod only a whole batch counts as a cycle.
        const length = j - start;
        const needed = Math.max(2 * period, period + repeats - 1);
        if ((period <= maxPeriod || batchAt.get(start) === period) && length >= needed) {
          const block = fps.slice(start, start + period);
          // A block that repeats within itself (A-A, A-B-A-B) is a shorter period's loop.
          const primitive = !Array.from({ length: period - 1 }, (_, i) => i + 1).some((q) => period % q === 0 && block.every((f, i) => f === block[i % q]));
          const span = order.slice(start, j);
          // It became a loop when the last of the calls up to the threshold had its result, whatever their order in a batch.
          const firedAt = Math.max(...order.slice(start, start + needed));
          const covered = found.some((l) => firedAt >= l.start && firedAt <= l.end);
          if (primitive && !covered) {
            const tools = order.slice(start, start + period).map((i) => calls[i]!.name);
            found.push({ start: Math.min(...span), end: Math.max(...span), firedAt, period, tools, repeats: Math.floor(length / period), wasted: length - period });
          }
        }
        // The next run starts period calls back from the break: those calls are trivially periodic.
        start = j - period + 1;
      }
    }
  };
  scan(alignedOrder(batches, prints), [1]);
  const longest = Math.max(maxPeriod, ...batches.map((b) => b.length));
  scan(sortedOrder(batches, prints), Array.from({ length: longest - 1 }, (_, i) => i + 2));
  return found.sort((a, b) => a.firedAt - b.firedAt);
}

/** Positions grouped by the message that made them (a call without one is a batch of its own). */
function batchesOf(calls: readonly CallRecord[]): number[][] {
  const batches: number[][] = [];
  calls.forEach((call, i) => {
    const last = batches.at(-1);
    if (last && call.message !== undefined && calls[last[0]!]!.message === call.message) last.push(i);
    else batches.push([i]);
  });
  return batches;
}

const byPrint = (prints: readonly string[]) => (a: number, b: number) => (prints[a]! < prints[b]! ? -1 : prints[a]! > prints[b]! ? 1 : a - b);

/** Each batch sorted by fingerprint. */
function sortedOrder(batches: readonly number[][], prints: readonly string[]): number[] {
  return batches.flatMap((batch) => [...batch].sort(byPrint(prints)));
}

/** Each batch lined up with its neighbours: calls also in the batch before first (in its order), calls also in the one after last. */
function alignedOrder(batches: readonly number[][], prints: readonly string[]): number[] {
  const order: number[] = [];
  batches.forEach((batch, b) => {
    const before = new Map((b > 0 ? order.slice(-batches[b - 1]!.length) : []).map((i, rank) => [prints[i]!, rank]));
    const after = new Set((batches[b + 1] ?? []).map((i) => prints[i]!));
    const group = (i: number) => (before.has(prints[i]!) ? 0 : after.has(prints[i]!) ? 2 : 1);
    order.push(...[...batch].sort((x, y) => group(x) - group(y) || (group(x) === 0 ? before.get(prints[x]!)! - before.get(prints[y]!)! : byPrint(prints)(x, y))));
  });
  return order;
}

/** Where each batch of two calls or more starts (in the order compared), and its size. */
function batchStarts(messages: readonly (number | undefined)[]): Map<number, number> {
  const starts = new Map<number, number>();
  let from = 0;
  for (let i = 1; i <= messages.length; i++) {
    if (i < messages.length && messages[i] !== undefined && messages[i] === messages[from]) continue;
    if (i - from > 1) starts.set(from, i - from);
    from = i;
  }
  return starts;
}
