/**
 * The last `contexts/current` answer of each provider that notifies its changes (`notifies: true`), by conversation.
 * Such an app promises `contexts/changed` whenever the answer would differ, so a turn reuses what it said last instead
 * of asking over the socket again. Kept in the hub's memory only: an object woken from hibernation, an app that
 * (re)initialises or disconnects, and a change the app notifies all start again from a real pull.
 *
 * A pull that was in flight when its provider or app was forgotten is not kept: its answer may predate the change.
 * Only answers that passed validation are kept (the caller's to check).
 */
export class KeptAnswers {
  private readonly answers = new Map<string, { value: unknown; chars: number }>();
  private chars = 0;
  /** Moves when a provider (by its ref) or an app (by its name) is forgotten: a pull of it started before keeps nothing. */
  private readonly generations = new Map<string, number>();

  constructor(private readonly limits: { entries: number; chars: number } = KEPT_LIMITS) {}

  /** The generation a pull of `ref` starts in, to hand back to `keep`. */
  now(ref: string): string {
    return `${this.generations.get(appOf(ref)) ?? 0}.${this.generations.get(ref) ?? 0}`;
  }

  get(ref: string, conversationId: string): unknown {
    return this.answers.get(keyOf(ref, conversationId))?.value;
  }

  /** Keeps an answer pulled in `generation`, unless something was forgotten since; the oldest go past the limits. */
  keep(ref: string, conversationId: string, generation: string, value: unknown): void {
    if (generation !== this.now(ref)) return;
    const chars = JSON.stringify(value ?? null).length;
    if (chars > this.limits.chars) return;
    const key = keyOf(ref, conversationId);
    this.drop(key);
    this.answers.set(key, { value, chars });
    this.chars += chars;
    for (const [oldest] of this.answers) {
      if (this.answers.size <= this.limits.entries && this.chars <= this.limits.chars) break;
      this.drop(oldest);
    }
  }

  /** A provider's content changed: what was kept of it, in every conversation, goes. */
  forget(ref: string): void {
    this.move(ref);
    for (const key of [...this.answers.keys()]) if (key.startsWith(`${ref}\u0000`)) this.drop(key);
  }

  /** An app (re)initialised or went away: what was kept of any of its providers goes. */
  forgetApp(app: string): void {
    this.move(app);
    for (const key of [...this.answers.keys()]) if (key.startsWith(`${app}:`)) this.drop(key);
  }

  /** A conversation ended: what was kept for it goes. */
  forgetConversation(conversationId: string): void {
    for (const key of [...this.answers.keys()]) if (key.endsWith(`\u0000${conversationId}`)) this.drop(key);
  }

  get size(): number {
    return this.answers.size;
  }

  private move(name: string): void {
    this.generations.set(name, (this.generations.get(name) ?? 0) + 1);
  }

  private drop(key: string): void {
    const kept = this.answers.get(key);
    if (!kept) return;
    this.answers.delete(key);
    this.chars -= kept.chars;
  }
}

/** What the hub keeps at most: answers, and their JSON's characters together (a context is at most 100,000). */
export const KEPT_LIMITS = { entries: 512, chars: 4_000_000 } as const;

const keyOf = (ref: string, conversationId: string) => `${ref}\u0000${conversationId}`;
const appOf = (ref: string) => ref.slice(0, ref.indexOf(":"));
