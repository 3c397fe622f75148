import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageTokens } from "../../src/core/assemble";
import { imagesOf, type ChatMessage, type ImagePart } from "../../src/protocol/messages";
import { viewGroups } from "../../src/history/plan";
import { hiddenImageSavings, IMAGE_GONE, renderHistory, withImagesHidden, withoutOldImages } from "../../src/history/view";

const NOW = new Date(Date.UTC(2026, 10, 20, 12));
const image = fc.record({ url: fc.webUrl({ validSchemes: ["https"] }), detail: fc.constantFrom("low" as const, "high" as const, undefined) }).map(
  ({ url, detail }): ImagePart => ({ type: "image_url", image_url: detail ? { url, detail } : { url } }),
);
const userWithImages = fc.record({ text: fc.string({ minLength: 1, maxLength: 80 }), images: fc.array(image, { minLength: 1, maxLength: 4 }) }).map(
  ({ text, images }): ChatMessage => ({ role: "user", content: [{ type: "text", text }, ...images] }),
);
const other = fc.constantFrom<ChatMessage>({ role: "user", content: "no images here" }, { role: "assistant", content: "A reply." });
const history = fc.array(fc.oneof(userWithImages, other), { maxLength: 12 });
/** Stored rows, one a day back from NOW (ages in the view too), seqs from 1. */
const stored = (messages: readonly ChatMessage[]) => messages.map((message, i) => ({ seq: i + 1, createdAt: new Date(NOW.getTime() - (messages.length - i) * 3_600_000).toISOString(), message }));
const a = (n: number): ImagePart => ({ type: "image_url", image_url: { url: `https://img.example/${n}.png` } });

describe("images hidden through a compaction's boundary", () => {
  it("hides every image of the messages at or before the boundary, in place, and none after it", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: [{ type: "text", text: "two" }, a(1), a(2)] },
      { role: "assistant", content: "Two photos." },
      { role: "user", content: [{ type: "text", text: "one" }, a(3)] },
    ];
    const gone = { type: "text" as const, text: IMAGE_GONE };
    expect(renderHistory({ summary: null, stored: stored(messages), stubs: new Map(), imagesHiddenThrough: 2 }, NOW).history).toEqual([
      { role: "user", content: [{ type: "text", text: "two" }, gone, gone] },
      { role: "assistant", content: "Two photos." },
      { role: "user", content: [{ type: "text", text: "one" }, a(3)] },
    ]);
    // No boundary: every image is shown, however many.
    expect(renderHistory({ summary: null, stored: stored(messages), stubs: new Map() }, NOW).history).toEqual(messages);
  });

  it("renders a view that only grew between compactions as the same messages, byte for byte, then more (property)", () => {
    fc.assert(
      fc.property(history, history, fc.nat(), (older, newer, at) => {
        const all = stored([...older, ...newer]);
        const boundary = all.length ? at % (all.length + 1) : 0;
        const render = (rows: typeof all) => renderHistory({ summary: null, stored: rows, stubs: new Map(), imagesHiddenThrough: boundary }, NOW).history.map((m) => JSON.stringify(m));
        const before = render(all.slice(0, older.length));
        expect(render(all).slice(0, before.length)).toEqual(before);
      }),
      { numRuns: 500 },
    );
  });

  it("knows what the placeholders save from the images alone, within a token a placeholder, and the planner counts it exactly (property)", () => {
    fc.assert(
      fc.property(history, fc.nat(), (messages, at) => {
        const rows = stored(messages);
        const boundary = rows.length ? at % (rows.length + 1) : 0;
        const shown = renderHistory({ summary: null, stored: rows, stubs: new Map(), imagesHiddenThrough: boundary }, NOW).history;
        const plain = renderHistory({ summary: null, stored: rows, stubs: new Map() }, NOW).history;
        const exact = plain.reduce((saved, m, i) => saved + messageTokens(m) - messageTokens(shown[i]!), 0);
        const hidden = messages.slice(0, boundary).flatMap(imagesOf);
        // A placeholder joins the text after a newline; text ending in whitespace may merge with it into one token.
        expect(Math.abs(hiddenImageSavings(hidden) - exact)).toBeLessThanOrEqual(hidden.length);
        if (hidden.length === 0) expect(exact).toBe(0);
        // What the planner is told a message would save is what hiding its images saves, to the token.
        const groups = viewGroups(plain, rows.map((r) => r.seq));
        const savings = groups.flatMap((g) => g.imageSavings);
        expect(savings).toEqual(plain.map((m) => messageTokens(m) - messageTokens(withImagesHidden(m))));
        expect(groups.flatMap((g) => g.images)).toEqual(plain.map((m) => imagesOf(m).length));
      }),
      { numRuns: 1_000 },
    );
  });

  it("renders a turn stored before boundaries existed as it was: only the newest of its images shown", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: [{ type: "text", text: "two" }, a(1), a(2)] },
      { role: "user", content: [{ type: "text", text: "one" }, a(3)] },
    ];
    const legacy = withoutOldImages(messages, 2);
    expect(legacy).toEqual([
      { role: "user", content: [{ type: "text", text: "two" }, { type: "text", text: IMAGE_GONE }, a(2)] },
      { role: "user", content: [{ type: "text", text: "one" }, a(3)] },
    ]);
    // The count wins over any boundary: the stored turn recorded it.
    expect(renderHistory({ summary: null, stored: stored(messages), stubs: new Map(), imagesHiddenThrough: 2 }, NOW, 2).history).toEqual(legacy);
  });
});
