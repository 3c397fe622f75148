/**
 * Deciding a compaction, purely. It works on whole turn groups: first it
 * hides the images beyond the newest few (a placeholder in their place), then
 * it clears old tool-result bodies (the newest few are kept), then, if that
 * was not enough, it covers the oldest groups with a summary, never touching
 * the protected tail or a group whose calls still wait for results. Nothing
 * here changes stored history: the plan says what the model's view becomes.
 */
import { messageTokens } from "../core/assemble";
import { groupMessages, type MessageGroup } from "../core/groups";
import { imagesOf, type ChatMessage } from "../protocol/messages";
import type { CompactionLimits, CompactionPolicy } from "../protocol/policies";
import { withImagesHidden } from "./view";

export interface ViewGroup {
  kind: MessageGroup["kind"];
  /** The stored seq of each message, in order. */
  seqs: readonly number[];
  /** Tokens of each message as the model reads it now (a cleared result counts its stub). */
  tokens: readonly number[];
  /** Which messages are tool results. */
  toolResult: readonly boolean[];
  /** Images each message shows now (hidden ones are placeholders already, and not counted). */
  images: readonly number[];
  /** What placeholders in place of each message's images would save, exactly (0 without images). */
  imageSavings: readonly number[];
  /** A call still without its result: never cleared, never summarised. */
  pending: boolean;
}

export interface PlanInput {
  /** The groups after the current summary, oldest first. */
  groups: readonly ViewGroup[];
  /** Seqs of tool results already replaced by a stub. */
  cleared: ReadonlySet<number>;
  /** What the model reads besides these groups: system message, current summary, the new message and its appendix. */
  fixedTokens: number;
  /** The current summary message's tokens (0 without one); a new summary replaces it. */
  summaryTokens: number;
  /** What the summary's fence and notes cost around its text: a new summary pays it even when its text is short. */
  summaryOverheadTokens: number;
  /** What a stub would cost in place of the tool result at `seq`. */
  stubTokens(seq: number): number;
  limits: CompactionLimits;
  policy: Pick<CompactionPolicy, "keepToolResults" | "tailGroups" | "keepImages">;
  /** Compact even below the trigger (an explicit request). */
  force?: boolean;
  /** Groups from this seq on are never summarised, nor their images hidden: the request the model is still working on. */
  protectFromSeq?: number | undefined;
  /**
   * What showing again the contexts whose message a summary through
   * `throughSeq` covers would cost: a summary's cost includes them. Asked only
   * when a summary is considered.
   */
  reinjected?: ((throughSeq: number) => number) | undefined;
}

export interface CompactionPlan {
  /** Tokens the model reads now, and after the plan (the summary counted at its budget). */
  before: number;
  after: number;
  /**
   * The images to hide: every shown image in the messages through `throughSeq` (the newest message they hide), all
   * but those of the newest messages that show `keepImages` of them. `messages`, `images` and `saved` (exact) count
   * those a new summary does not cover. Null when none is hidden.
   */
  hideImages: { throughSeq: number; messages: number; images: number; saved: number } | null;
  /** Tool results to replace by stubs, oldest first. */
  clear: { seq: number; saved: number }[];
  /** The groups a new summary covers (from the start of history), or null. */
  summarise: { throughSeq: number; groups: number; messages: number; tokens: number; summaryEstimate: number } | null;
  /** Whether the plan reaches the target. */
  reachesTarget: boolean;
}

/** The view's messages as whole groups, each message with its seq and tokens; a group whose calls are not all answered is pending. */
export function viewGroups(messages: readonly ChatMessage[], seqs: readonly number[]): ViewGroup[] {
  return groupMessages(messages).map((g) => {
    const first = g.messages[0]!;
    const calls = first.role === "assistant" ? (first.tool_calls?.length ?? 0) : 0;
    return {
      kind: g.kind,
      seqs: g.messages.map((_, k) => seqs[g.start + k]!),
      tokens: g.messages.map(messageTokens),
      toolResult: g.messages.map((m) => m.role === "tool"),
      images: g.messages.map((m) => imagesOf(m).length),
      imageSavings: g.messages.map((m) => (imagesOf(m).length ? messageTokens(m) - messageTokens(withImagesHidden(m)) : 0)),
      pending: g.kind === "tool_calls" && g.messages.length - 1 < calls,
    };
  });
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

export function viewTokens(input: Pick<PlanInput, "groups" | "fixedTokens">): number {
  return input.fixedTokens + sum(input.groups.map((g) => sum(g.tokens)));
}

export function shouldCompact(input: Pick<PlanInput, "groups" | "fixedTokens" | "limits">): boolean {
  return viewTokens(input) > input.limits.trigger;
}

/** Below the trigger, a compaction hides old images only once at least this many (and `keepImages`) would go. */
export const IMAGE_BATCH = 3;

export function planCompaction(input: PlanInput): CompactionPlan | null {
  const before = viewTokens(input);
  const { target } = input.limits;
  // Tokens per message as the plan goes; clearing lowers them.
  const tokens = input.groups.map((g) => [...g.tokens]);
  const total = () => input.fixedTokens + sum(tokens.map(sum));

  // Images first: each costs hundreds of tokens, a placeholder tells the model it was there, and hiding them all at
  // once (not one a turn) changes the cached prefix at this compaction only.
  const hidden = hideOldImages(input, tokens);
  // The boundary is the newest message hidden; what a new summary covers is out of view anyway, so not counted.
  const hideImages = (summaryThrough = 0): CompactionPlan["hideImages"] => {
    const shown = hidden.filter((h) => h.seq > summaryThrough);
    return hidden.length ? { throughSeq: hidden[0]!.seq, messages: shown.length, images: sum(shown.map((h) => h.images)), saved: sum(shown.map((h) => h.saved)) } : null;
  };
  if (!input.force && before <= input.limits.trigger) {
    // Below the trigger only images go, in a batch: once there are as many to hide as a compaction keeps (and at least
    // IMAGE_BATCH), so the prompt changes once every few images, near its end, and images never pile up unread.
    const batch = sum(hidden.map((h) => h.images)) >= Math.max(input.policy.keepImages, IMAGE_BATCH);
    return batch ? { before, after: total(), hideImages: hideImages(), clear: [], summarise: null, reachesTarget: total() <= target } : null;
  }

  const clear: CompactionPlan["clear"] = [];
  const results = input.groups.flatMap((g, gi) => g.seqs.map((seq, mi) => ({ seq, gi, mi, tool: g.toolResult[mi]!, pending: g.pending }))).filter((r) => r.tool);
  const clearable = results.slice(0, Math.max(0, results.length - input.policy.keepToolResults));
  for (const r of clearable) {
    if (total() <= target) break;
    if (r.pending || input.cleared.has(r.seq)) continue;
    const saved = tokens[r.gi]![r.mi]! - input.stubTokens(r.seq);
    if (saved <= 0) continue;
    tokens[r.gi]![r.mi]! -= saved;
    clear.push({ seq: r.seq, saved });
  }
  if (total() <= target) return clear.length || hidden.length ? { before, after: total(), hideImages: hideImages(), clear, summarise: null, reachesTarget: true } : null;

  // A summary must beat clearing alone, counting its fence, or it only costs a summariser call.
  const afterClearing = total();
  const candidates = summarisable(input, tokens);
  const currentText = Math.max(0, input.summaryTokens - input.summaryOverheadTokens);
  let covered = 0;
  let best: { count: number; after: number; summary: number } | null = null;
  for (let count = 1; count <= candidates; count++) {
    covered += sum(tokens[count - 1]!);
    const summary = estimateSummaryTokens({ overhead: input.summaryOverheadTokens, currentText, covered, budget: input.limits.summaryTokens });
    const after = afterClearing - covered - input.summaryTokens + summary + (input.reinjected?.(input.groups[count - 1]!.seqs.at(-1)!) ?? 0);
    if (after < afterClearing && (best === null || after < best.after)) best = { count, after, summary };
    if (after <= target) break;
  }
  if (best === null) return clear.length || hidden.length ? { before, after: afterClearing, hideImages: hideImages(), clear, summarise: null, reachesTarget: false } : null;

  const coveredGroups = input.groups.slice(0, best.count);
  const throughSeq = coveredGroups.at(-1)!.seqs.at(-1)!;
  return {
    before,
    after: best.after,
    hideImages: hideImages(throughSeq),
    // A result the summary covers is out of the view anyway: clearing it would only cost a write.
    clear: clear.filter((c) => c.seq > throughSeq),
    summarise: {
      throughSeq,
      groups: best.count,
      messages: sum(coveredGroups.map((g) => g.seqs.length)),
      tokens: sum(coveredGroups.map((g) => sum(g.tokens))),
      summaryEstimate: best.summary,
    },
    reachesTarget: best.after <= target,
  };
}

/**
 * What a new summary is counted at before it is written: its fence, plus the
 * current summary's text and half of what it newly covers (a digest keeps the
 * user's words and drops tool output), within its budget. The summary written
 * is measured again when the compaction is recorded.
 */
export function estimateSummaryTokens(o: { overhead: number; currentText: number; covered: number; budget: number }): number {
  return o.overhead + Math.min(o.budget, o.currentText + Math.ceil(o.covered / 2));
}

/**
 * The messages whose images the plan hides, newest first, lowering `tokens` by what each saves: every message with
 * shown images older than the newest ones that show `keepImages` (a message's images go together), and none from
 * `protectFromSeq` on.
 */
function hideOldImages(input: PlanInput, tokens: number[][]): { seq: number; images: number; saved: number }[] {
  const hidden: { seq: number; images: number; saved: number }[] = [];
  let kept = 0;
  for (let gi = input.groups.length - 1; gi >= 0; gi--) {
    const g = input.groups[gi]!;
    for (let mi = g.seqs.length - 1; mi >= 0; mi--) {
      const images = g.images[mi]!;
      if (images === 0) continue;
      const seq = g.seqs[mi]!;
      if (kept < input.policy.keepImages || (input.protectFromSeq !== undefined && seq >= input.protectFromSeq)) {
        kept += images;
        continue;
      }
      tokens[gi]![mi]! -= g.imageSavings[mi]!;
      hidden.push({ seq, images, saved: g.imageSavings[mi]! });
    }
  }
  return hidden;
}

/** How many of the oldest groups may be summarised: all but the protected tail and anything from a pending or protected group on. */
function summarisable(input: PlanInput, tokens: readonly (readonly number[])[]): number {
  const { groups } = input;
  const firstPending = groups.findIndex((g) => g.pending || (input.protectFromSeq !== undefined && g.seqs[0]! >= input.protectFromSeq));
  let tailStart = firstPending === -1 ? groups.length : firstPending;
  let tail = 0;
  let protectedGroups = 0;
  while (tailStart > 0) {
    const next = sum(tokens[tailStart - 1]!);
    if (protectedGroups >= input.policy.tailGroups && tail + next > input.limits.tailTokens) break;
    tail += next;
    protectedGroups++;
    tailStart--;
  }
  return tailStart;
}
