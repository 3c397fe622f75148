import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageTokens } from "../../src/core/assemble";
import { imagesOf, type ChatMessage, type ImagePart } from "../../src/core/messages";
import { IMAGE_GONE, oldImageSavings, withoutOldImages } from "../../src/history/view";

const image = fc.record({ url: fc.webUrl({ validSchemes: ["https"] }), detail: fc.constantFrom("low" as const, "high" as const, undefined) }).map(
  ({ url, detail }): ImagePart => ({ type: "image_url", image_url: detail ? { url, detail } : { url } }),
);
const userWithImages = fc.record({ text: fc.string({ minLength: 1, maxLength: 80 }), images: fc.array(image, { minLength: 1, maxLength: 4 }) }).map(
  ({ text, images }): ChatMessage => ({ role: "user", content: [{ type: "text", text }, ...images] }),
);
const other = fc.constantFrom<ChatMessage>({ role: "user", content: "no images here" }, { role: "assistant", content: "A reply." });
const history = fc.array(fc.oneof(userWithImages, other), { maxLength: 12 });

describe("images beyond the newest few", () => {
  it("replaces each older image with a note, newest kept, in place", () => {
    const a = (n: number): ImagePart => ({ type: "image_url", image_url: { url: `https://img.example/${n}.png` } });
    const shown = withoutOldImages([{ role: "user", content: [{ type: "text", text: "two" }, a(1), a(2)] }, { role: "user", content: [{ type: "text", text: "one" }, a(3)] }], 2);
    expect(shown).toEqual([
      { role: "user", content: [{ type: "text", text: "two" }, { type: "text", text: IMAGE_GONE }, a(2)] },
      { role: "user", content: [{ type: "text", text: "one" }, a(3)] },
    ]);
  });

  it("knows what the placeholders save from the images alone, within a token per placeholder, over 1,000 random histories", () => {
    fc.assert(
      fc.property(history, fc.nat({ max: 6 }), (messages, keep) => {
        const shown = withoutOldImages(messages, keep);
        const exact = messages.reduce((saved, m, i) => saved + messageTokens(m) - messageTokens(shown[i]!), 0);
        const placeholders = Math.max(0, messages.flatMap(imagesOf).length - keep);
        // A placeholder joins the text after a newline; text ending in whitespace may merge with it into one token.
        expect(Math.abs(oldImageSavings(messages.map(imagesOf).filter((images) => images.length > 0), keep) - exact)).toBeLessThanOrEqual(placeholders);
        if (placeholders === 0) expect(exact).toBe(0);
      }),
      { numRuns: 1_000 },
    );
  });
});
