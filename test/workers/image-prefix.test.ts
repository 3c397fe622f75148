import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { conversationStub } from "../../src/conversation/stub";
import { messageTokens } from "../../src/core/assemble";
import { imagesOf, textOf, type ChatMessage } from "../../src/protocol/messages";
import { IMAGE_GONE, withoutOldImages } from "../../src/history/view";
import type { CompactionStatus } from "../../src/protocol/history";
import type { TurnResult } from "../../src/protocol/frontend";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

/**
 * Issue 10, item 3: images leave the model's view only when a compaction is recorded, never one message a turn, so
 * every turn that does not compact extends the previous turn's model input byte for byte and providers can cache it.
 */

const TURNS = 60;

async function setup(policy: Record<string, unknown>) {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "photos", {
    "album-state": { name: "Album", current: () => ({ content: "album: holiday 2026, 60 photos", title: "Album" }) },
  });
  const agent = await app.createAgent("viewer", ["photos:album-state"]);
  const frontend = await Frontend.for(id);
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", { compaction: policy });
  return { id, frontend, agent, conversation, path: `/v1/conversations/${conversation}` };
}

const placeholders = (messages: readonly ChatMessage[]) =>
  messages.reduce((n, m) => n + (m.role === "user" && typeof m.content !== "string" ? m.content.filter((p) => p.type === "text" && p.text === IMAGE_GONE).length : 0), 0);
const visibleImages = (messages: readonly ChatMessage[]) => messages.flatMap((m) => imagesOf(m).map((i) => i.image_url.url));

interface Figures {
  turns: number;
  compactions: number;
  /** Turns that do not compact and extend the previous turn's input byte for byte. */
  extended: number;
  /** Turns that do not compact and yet rewrite part of the previous input. */
  broken: number;
  /** Tokens after the longest common prefix with the previous input, summed over the turns: what a cache cannot serve. */
  uncachedTokens: number;
  /** Tokens of every input, summed. */
  totalTokens: number;
  /** The earliest message a non-compacting turn rewrote (1 = the first after the system message), or null. */
  earliestRewrite: number | null;
  /** The most messages a compacting turn read that were not in the previous input as they were: how far back it changed the prompt. */
  compactionDepth: number;
  /** The most images a turn's model input showed. */
  mostImages: number;
}

/** One user message with one image a turn, a short reply after it; returns every turn and the prefix figures. */
async function session(policy: Record<string, unknown>) {
  const s = await setup(policy);
  const bodies: Record<string, unknown>[] = [];
  const turns: TurnResult[] = [];
  const figures: Figures = { turns: 0, compactions: 0, extended: 0, broken: 0, uncachedTokens: 0, totalTokens: 0, earliestRewrite: null, compactionDepth: 0, mostImages: 0 };
  let previous: string[] = [];
  for (let i = 0; i < TURNS; i++) {
    const body = { agent: s.agent, turnId: `photo-${i}`, message: `Photo ${i}: what is in this one, compared with the others?`, images: [{ url: `https://images.example.com/holiday/${i}.jpg` }] };
    const turn = await s.frontend.turn(s.conversation, body);
    await s.frontend.json("POST", `${s.path}/messages`, { messages: [{ role: "assistant", content: `Photo ${i} shows the harbour at ${i % 24}:00, busier than photo ${Math.max(0, i - 1)}.` }] });
    const serialised = turn.messages.map((m) => JSON.stringify(m));
    let common = 0;
    while (common < previous.length && common < serialised.length && serialised[common] === previous[common]) common++;
    const extends_ = common === previous.length;
    figures.mostImages = Math.max(figures.mostImages, visibleImages(turn.messages).length);
    if (turn.envelope.compaction) {
      figures.compactions++;
      figures.compactionDepth = Math.max(figures.compactionDepth, serialised.length - common);
    }
    else if (extends_) figures.extended++;
    else {
      figures.broken++;
      figures.earliestRewrite = Math.min(figures.earliestRewrite ?? Number.MAX_SAFE_INTEGER, common);
    }
    figures.uncachedTokens += turn.messages.slice(common).reduce((n, m) => n + messageTokens(m), 0);
    figures.totalTokens += turn.usage.total;
    figures.turns++;
    previous = serialised;
    bodies.push(body);
    turns.push(turn);
  }
  console.log(`image prefix, window ${String(policy.contextWindow)}: ${JSON.stringify(figures)}`);
  return { s, bodies, turns, figures };
}

describe("images leave the view only at a compaction", () => {
  it("on a 128k window far from its trigger, 60 turns with an image each: old images go in batches near the end of the prompt, every other turn extends the previous input byte for byte", async () => {
    const { s, bodies, turns, figures } = await session({ contextWindow: 128_000 });
    // Far below the trigger, a compaction only hides a batch of old images: as many as keepImages (3), at least three.
    expect(figures.compactions).toBeGreaterThanOrEqual(TURNS / 6);
    expect(figures.broken).toBe(0);
    expect(figures.extended + figures.compactions).toBe(TURNS);
    for (const t of turns.filter((t) => t.envelope.compaction)) {
      expect(t.envelope.compaction).toMatchObject({ cleared: [], summary: null });
      expect(t.envelope.compaction!.images!.images).toBeGreaterThanOrEqual(3);
    }
    // The model never reads more than the newest keepImages, a batch, and the new message's: images never pile up.
    expect(figures.mostImages).toBeLessThanOrEqual(3 + 3 + 1);
    // A batch changes the prompt only near its end: the messages after the oldest image it hid, a dozen or so.
    expect(figures.compactionDepth).toBeLessThanOrEqual(2 * (3 + 3) + 2);
    expect(turns.at(-1)!.messages.length).toBeGreaterThan(100);
    for (let i = 0; i < TURNS; i++) {
      const replayed = await s.frontend.turn(s.conversation, bodies[i]!);
      expect(replayed.replayed).toBe(true);
      expect(replayed.messages, `turn ${i}`).toEqual(turns[i]!.messages);
    }
  }, 120_000);

  it("on a 16k window, hides images only at its compactions, all but the newest few, and replays each turn as it was", async () => {
    // usable 15,360, trigger 13,056, target 10,752: an image is 765 tokens, so images alone push it over the trigger.
    const { s, bodies, turns, figures } = await session({ contextWindow: 16_384, outputReserve: 1_024, keepImages: 3 });
    expect(figures.compactions).toBeGreaterThanOrEqual(3);
    expect(figures.broken).toBe(0);
    expect(figures.extended + figures.compactions).toBe(TURNS);
    for (let i = 1; i < TURNS; i++) {
      const [before, now] = [turns[i - 1]!, turns[i]!];
      if (now.envelope.compaction) {
        // A compaction hides the images beyond the newest three of the history, in one step; the new message's own stays.
        const report = now.envelope.compaction;
        expect(report.images, `turn ${i}`).toBeTruthy();
        expect(visibleImages(now.messages)).toHaveLength(3 + 1);
        expect(placeholders(now.messages)).toBeGreaterThan(placeholders(before.messages));
        expect(now.envelope.history!.imagesHiddenThroughSeq).toBe(report.images!.hiddenThroughSeq);
      } else {
        // Between compactions nothing is hidden: the same placeholders, and one more image (this message's).
        expect(placeholders(now.messages), `turn ${i}`).toBe(placeholders(before.messages));
        expect(visibleImages(now.messages)).toEqual([...visibleImages(before.messages), `https://images.example.com/holiday/${i}.jpg`]);
        expect(now.envelope.history!.imagesHiddenThroughSeq).toBe(before.envelope.history!.imagesHiddenThroughSeq);
      }
      expect(now.usage.total).toBeLessThanOrEqual(15_360);
    }
    // The compactions only hid images: the images alone were what passed the trigger, and hiding them reached the target.
    for (const t of turns.filter((t) => t.envelope.compaction)) {
      expect(t.envelope.compaction!.summary).toBeNull();
      expect(t.envelope.compaction!.reachesTarget).toBe(true);
    }
    const status = await s.frontend.json<CompactionStatus>("GET", `${s.path}/compaction`);
    const context = await s.frontend.json<{ messages: ChatMessage[]; tokens: number }>("GET", `${s.path}/context`);
    // What should-compact counts is what the model would read: placeholders counted from the boundary, each at most a
    // token more than in its message's text (a newline after punctuation is one token with it), never less.
    const hidden = placeholders(context.messages);
    expect(status.tokens - context.tokens).toBeGreaterThanOrEqual(0);
    expect(status.tokens - context.tokens).toBeLessThanOrEqual(hidden);
    expect(textOf(context.messages.at(-1)!)).toMatch(/^Photo 59 shows/);
    for (let i = 0; i < TURNS; i++) {
      const replayed = await s.frontend.turn(s.conversation, bodies[i]!);
      expect(replayed.messages, `turn ${i}`).toEqual(turns[i]!.messages);
    }
  }, 120_000);

  it("replays a turn stored before image boundaries as it was: with the count of earlier images it recorded", async () => {
    const s = await setup({ keepImages: 2 });
    await s.frontend.turn(s.conversation, { agent: s.agent, message: "two", images: [{ url: "https://images.example.com/a.png" }, { url: "https://images.example.com/b.png" }] });
    const body = { agent: s.agent, turnId: "old", message: "one more", images: [{ url: "https://images.example.com/c.png" }] };
    const turn = await s.frontend.turn(s.conversation, body);
    expect(visibleImages(turn.messages)).toHaveLength(3);
    // Make it a record of the old rule: its evidence said one earlier image stayed (keepImages 2, less its own one).
    await runInDurableObject(conversationStub(env, s.id, s.conversation), (_, state) => {
      const row = state.storage.sql.exec<{ result: string }>("SELECT result FROM turns WHERE turn_id = 'old'").one();
      const result = JSON.parse(row.result) as { envelope: { history: Record<string, unknown> } };
      delete result.envelope.history.imagesHiddenThroughSeq;
      result.envelope.history.earlierImages = 1;
      state.storage.sql.exec("UPDATE turns SET result = ? WHERE turn_id = 'old'", JSON.stringify(result));
    });
    const replayed = await s.frontend.turn(s.conversation, body);
    expect(replayed.replayed).toBe(true);
    // What that turn showed under the old rule: the first image a placeholder, the second and its own shown.
    const own = turn.messages.at(-1)!;
    expect(replayed.messages).toEqual([...withoutOldImages(turn.messages.slice(0, -1), 1), own]);
    expect(visibleImages(replayed.messages)).toEqual(["https://images.example.com/b.png", "https://images.example.com/c.png"]);
  });
});
