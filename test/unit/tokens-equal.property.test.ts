/**
 * `countTokens` finds most pieces by hand rather than with o200k's pattern, and bounds ASCII pieces without making
 * strings of them (issue 21). Every figure the runtime has reported (trim markers, usage, budgets) must stay the same:
 * on any text it counts exactly what the pattern's own split counts (`countTokensByPattern`), and on a recorded draw of
 * texts and on every sample exactly what the count before the change counted (test/fixtures/token-counts-before.json).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiPiece, countTokens, countTokensByPattern, PIECE } from "../../src/core/tokens";
import { ADVERSARIAL_INPUTS } from "../fixtures/adversarial-text";
import { TOKEN_SAMPLES } from "../fixtures/token-samples";
import { KINDS, RECORDED, text } from "../fixtures/token-texts";
import before from "../fixtures/token-counts-before.json";

/** Where o200k's pattern ends the piece at `at`: what the hand-written split must find wherever it finds one. */
const STICKY = new RegExp(PIECE.source, "uy");
function patternEnd(t: string, at: number): number {
  STICKY.lastIndex = at;
  return STICKY.test(t) ? STICKY.lastIndex : -1;
}

describe("the token count, faster", () => {
  it("splits text into the pieces of o200k's pattern wherever it splits by hand (property)", () => {
    fc.assert(
      fc.property(text, (t) => {
        for (let at = 0; at < t.length; at++) if (![0, patternEnd(t, at)].includes(asciiPiece(t, at))) return false;
        return true;
      }),
      { numRuns: 3_000 },
    );
  });

  it("splits ASCII text by hand everywhere (property)", () => {
    const ascii = fc.array(fc.oneof(KINDS.ascii, KINDS.words, KINDS.code, KINDS["long ascii pieces"]), { minLength: 1, maxLength: 8 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(ascii, (t) => {
        for (let at = 0; at < t.length; at++) if (asciiPiece(t, at) === 0) return false;
        return true;
      }),
      { numRuns: 1_000 },
    );
  });

  it.each(Object.entries(KINDS))("counts exactly what the pattern's split counts on %s (property)", (_kind, kind) => {
    fc.assert(
      fc.property(kind, (t) => countTokens(t) === countTokensByPattern(t)),
      { numRuns: 1_000 },
    );
  });

  it("counts exactly what the pattern's split counts on every kind mixed, and on every start of it (property)", () => {
    fc.assert(
      fc.property(text, fc.nat(), (t, cut) => {
        const tail = t.slice(cut % (t.length + 1));
        return countTokens(t) === countTokensByPattern(t) && countTokens(tail) === countTokensByPattern(tail);
      }),
      { numRuns: 2_000 },
    );
  });

  it("counts the recorded draw of texts exactly as the count before the change did", () => {
    const drawn = fc.sample(text, RECORDED);
    expect(drawn.map((t) => countTokens(t))).toEqual(before.drawn);
  });

  it.each(Object.entries({ ...TOKEN_SAMPLES, ...ADVERSARIAL_INPUTS }))("counts %s as the count before the change did", (kind, sample) => {
    expect(countTokens(sample)).toBe(before.samples[kind as keyof typeof before.samples]);
  });
});
