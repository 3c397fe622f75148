/**
 * `countTokens` finds most pieces by hand rather than with o200k's pattern, and bounds ASCII pieces without making
 * strings of them (issue 21). Every figure the runtime has reported (trim markers, usage, budgets) must stay the same:
 * on any text it counts exactly what the count before it did (test/fixtures/tokens-reference.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asciiPiece, countTokens } from "../../src/core/tokens";
import { ADVERSARIAL_INPUTS } from "../fixtures/adversarial-text";
import { TOKEN_SAMPLES } from "../fixtures/token-samples";
import { PIECE, referenceCountTokens } from "../fixtures/tokens-reference";

const chars = (from: number, to: number) => fc.integer({ min: from, max: to }).map((c) => String.fromCharCode(c));
const codePoints = (from: number, to: number) => fc.integer({ min: from, max: to }).map((c) => String.fromCodePoint(c));
/**
 * The characters where the hand-written split and the pattern could part: ASCII of every class, the contractions, and
 * next to them what is not ASCII but decides a piece (letters of every case, marks, digits, white space, line
 * separators, lone surrogates).
 */
const tricky = fc.constantFrom(
  ..."'sStTdDmMlLvVeErR/-_.(\r\n\t \v\f\x00\x1c\x7f",
  ..."éÉǅʰ中あ\u0301\u20e3²٣Ⅳ\u00a0\u1680\u2028\u2029\u3000\ufeff\u0085\u200d…€",
  "\ud83d",
  "\ude00",
  "😀",
  "'ll",
  "'VE",
  "'Re",
  "\r\n",
);
const anyChar = fc.oneof(
  { arbitrary: chars(0, 0x7f), weight: 6 },
  { arbitrary: tricky, weight: 4 },
  { arbitrary: chars(0x80, 0xffff), weight: 1 },
  { arbitrary: codePoints(0x10000, 0x10ffff), weight: 1 },
);
const run = (char: fc.Arbitrary<string>, max: number) => fc.array(char, { minLength: 1, maxLength: max }).map((cs) => cs.join(""));
const word = (from: number, to: number) => run(codePoints(from, to), 10);
const KINDS = {
  "any characters": run(anyChar, 40),
  ascii: run(chars(0, 0x7f), 60),
  words: run(fc.oneof(word(0x61, 0x7a), word(0x41, 0x5a), fc.constantFrom(" ", "'s", "'ll", "'t", "n't", "\n", ", ")), 20),
  "unicode letters": run(fc.oneof(word(0xc0, 0x24f), word(0x370, 0x4ff), word(0x600, 0x6ff), chars(0x300, 0x36f), fc.constantFrom(" ", "a", "Z")), 12),
  cjk: run(fc.oneof(word(0x4e00, 0x9fff), word(0x3040, 0x30ff), word(0xac00, 0xd7a3), fc.constantFrom("，", "。", " ", "1")), 12),
  emoji: run(fc.oneof(codePoints(0x1f300, 0x1faff), fc.constantFrom("\u200d", "\ufe0f", "🏽", "👩‍💻", " ", "!")), 20),
  code: fc.tuple(word(0x61, 0x7a), word(0x41, 0x5a), fc.nat(99_999)).map(([f, T, n]) => `  const ${f}: ${T}<${f}> = (${f}) => {\n\treturn ${f}[${n}] ?? null; // ${T}'s\n  };\r\n`),
  "white space runs": run(fc.constantFrom(" ", "  ", "\t", "\n", "\r\n", "\n\n", "   \n", "\u00a0", "\u3000", "x", "."), 20),
  numbers: run(fc.oneof(fc.nat().map(String), fc.constantFrom(".", ",", " ", "-", "²", "٣")), 12),
  "long repeats": fc.tuple(run(anyChar, 4), fc.integer({ min: 2, max: 120 })).map(([s, n]) => s.repeat(n)),
  "long ascii pieces": fc.tuple(fc.constantFrom("a", "Z", "ab", "-", "=", " ", "\n", "7"), fc.integer({ min: 60, max: 400 })).map(([s, n]) => s.repeat(n)),
};
const text = fc.array(fc.oneof(...Object.values(KINDS)), { minLength: 1, maxLength: 12 }).map((parts) => parts.join(""));

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

  it.each(Object.entries(KINDS))("counts exactly what the count before it did on %s (property)", (_kind, kind) => {
    fc.assert(
      fc.property(kind, (t) => countTokens(t) === referenceCountTokens(t)),
      { numRuns: 1_000 },
    );
  });

  it("counts exactly what the count before it did on every kind mixed, and on every start of it (property)", () => {
    fc.assert(
      fc.property(text, fc.nat(), (t, cut) => countTokens(t) === referenceCountTokens(t) && countTokens(t.slice(cut % (t.length + 1))) === referenceCountTokens(t.slice(cut % (t.length + 1)))),
      { numRuns: 2_000 },
    );
  });

  it.each(Object.entries({ ...TOKEN_SAMPLES, ...ADVERSARIAL_INPUTS }))("counts %s as before", (_kind, sample) => {
    expect(countTokens(sample)).toBe(referenceCountTokens(sample));
  });
});
