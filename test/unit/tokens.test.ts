import fc from "fast-check";
import { countTokens as exactTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { O200K_PAIRS, O200K_PIECES } from "../../src/core/o200k-pieces";
import { countTokens } from "../../src/core/tokens";
import { ADVERSARIAL_INPUTS } from "../fixtures/adversarial-text";
import { TOKEN_SAMPLES } from "../fixtures/token-samples";

/** The most the bound may charge over the exact count on the samples: ordinary English and code, then the rest. */
const ORDINARY = new Set(["prose", "english", "code", "json", "prettyJson", "logs", "markdown", "shell"]);

const chars = (from: number, to: number) => fc.integer({ min: from, max: to }).map((c) => String.fromCodePoint(c));
const run = (char: fc.Arbitrary<string>, max = 12) => fc.array(char, { minLength: 1, maxLength: max }).map((cs) => cs.join(""));
const lower = chars(0x61, 0x7a);
const upper = chars(0x41, 0x5a);
const digit = chars(0x30, 0x39);
const punctuation = fc.constantFrom(..."!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
/** Pieces of the kinds budgets meet, each a generator of text nobody tuned the bound on. */
const PIECE_KINDS: Record<string, fc.Arbitrary<string>> = {
  "short words": run(lower, 9),
  "capitalised and upper-case words": fc.tuple(upper, run(lower, 8), run(upper, 6)).map(([a, b, c]) => `${a}${b} ${c}`),
  identifiers: fc.tuple(run(lower, 6), fc.constantFrom("_", "-", ".", ":", "/", ""), run(fc.oneof(lower, upper, digit), 8)).map((p) => p.join("")),
  "app:sNN names": fc.tuple(run(lower, 5), fc.nat(99)).map(([app, n]) => `- ${app}:s${String(n).padStart(2, "0")}:`),
  numbers: run(digit, 20),
  "punctuation runs": run(punctuation, 10),
  base64: run(fc.oneof(lower, upper, digit, fc.constantFrom("+", "/", "=")), 60),
  urls: fc.tuple(run(lower, 8), run(lower, 8), fc.nat()).map(([host, path, q]) => `https://${host}.com/${path}?id=${q}&x=${host}`),
  code: fc.tuple(run(lower, 8), run(lower, 8), fc.nat(999)).map(([f, a, n]) => `  const ${f} = (${a}) => { return ${a}[${n}] ?? null; };\n`),
  whitespace: run(fc.constantFrom(" ", "  ", "\t", "\n", "\r\n", "\n\n", "   \n"), 8),
  CJK: run(chars(0x4e00, 0x9fff), 20),
  "kana and hangul": run(fc.oneof(chars(0x3040, 0x30ff), chars(0xac00, 0xd7a3)), 20),
  emoji: run(fc.oneof(chars(0x1f300, 0x1faff), fc.constantFrom("\u200d", "\ufe0f", "🏽", "👩‍💻")), 10),
  "other scripts": run(fc.oneof(chars(0x400, 0x4ff), chars(0x370, 0x3ff), chars(0x600, 0x6ff), chars(0x900, 0x97f), chars(0xe00, 0xe7f), chars(0x590, 0x5ff)), 12),
  "accents and combining marks": run(fc.oneof(chars(0xc0, 0x24f), chars(0x300, 0x36f), lower), 12),
  "symbols, controls and private use": run(fc.oneof(chars(0, 0x1f), chars(0x2000, 0x2bff), chars(0xe000, 0xf8ff), chars(0xff00, 0xffef), chars(0x10000, 0x10ffff)), 12),
  "lone surrogates": run(fc.oneof(chars(0xd800, 0xdfff).map((c) => c), lower), 6),
};
const separator = fc.constantFrom("", " ", "\n", ", ", "\t");
/** A text of one kind, or of several mixed without spaces between them (mixed scripts, code among prose). */
const text = (kinds: fc.Arbitrary<string>[]) => fc.array(fc.tuple(fc.oneof(...kinds), separator), { minLength: 1, maxLength: 40 }).map((parts) => parts.flat().join(""));

describe("the token count", () => {
  it.each(Object.entries(TOKEN_SAMPLES))("is never below the exact o200k count on %s, and not far above", (kind, sample) => {
    const ratio = countTokens(sample) / exactTokens(sample);
    expect(ratio).toBeGreaterThanOrEqual(1);
    expect(ratio).toBeLessThanOrEqual(ORDINARY.has(kind) ? 1.7 : 3.7);
  });

  it.each(Object.entries(PIECE_KINDS))("is never below the exact o200k count on generated %s (property)", (_kind, kind) => {
    fc.assert(
      fc.property(text([kind]), (t) => countTokens(t) >= exactTokens(t)),
      { numRuns: 300 },
    );
  });

  it("is never below the exact o200k count on every kind mixed (property)", () => {
    fc.assert(
      fc.property(text(Object.values(PIECE_KINDS)), (t) => countTokens(t) >= exactTokens(t)),
      { numRuns: 2_000 },
    );
  });

  it("holds a skills menu of short words and app:sNN names to its budget (issue 20: 1,278 counted, 1,370 exact)", () => {
    const words = "make send read plan sort file note list mail book call task".split(" ");
    const menu = Array.from({ length: 60 }, (_, i) => `- app:s${String(i).padStart(2, "0")}: ${Array.from({ length: 14 }, (_, j) => words[(i * 7 + j * 5) % words.length]).join(" ")}…`).join("\n");
    expect(countTokens(menu)).toBeGreaterThanOrEqual(exactTokens(menu));
  });

  it("rests on two facts about o200k that the shipped vocabulary must keep: each listed piece is one token, and the pair bitmap is exact", () => {
    for (const piece of O200K_PIECES) if (exactTokens(piece) !== 1) expect.fail(`"${piece}" is not one o200k token`);
    const pairs = Buffer.from(O200K_PAIRS, "base64");
    const utf8 = new TextEncoder();
    // Two-byte strings o200k takes as one piece: lower-case pairs, a space or a symbol and a letter, symbol pairs, two-byte characters.
    const lowerCase = "abcdefghijklmnopqrstuvwxyz";
    const symbols = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    const onePiece = [...[...lowerCase, ...symbols].flatMap((a) => [...lowerCase].map((b) => a + b)), ...[...symbols].flatMap((a) => [...symbols].map((b) => a + b)), ...Array.from({ length: 0x780 }, (_, i) => String.fromCharCode(0x80 + i))];
    for (const s of onePiece) {
      const [a, b] = utf8.encode(s);
      const listed = ((pairs[(a! << 5) | (b! >> 3)]! >> (b! & 7)) & 1) === 1;
      if (listed !== (exactTokens(s) === 1)) expect.fail(`pair ${JSON.stringify(s)}: the bitmap says ${listed}, o200k counts ${exactTokens(s)}`);
    }
  });

  it("counts nothing as nothing and grows with the text", () => {
    expect(countTokens("")).toBe(0);
    const sample = TOKEN_SAMPLES.english!;
    // Only the seam between the copies may merge.
    expect(Math.abs(countTokens(sample + sample) - 2 * countTokens(sample))).toBeLessThanOrEqual(1);
  });

  it.each(Object.entries(ADVERSARIAL_INPUTS))("counts 100 KB of %s in linear time", (_kind, input) => {
    const started = performance.now();
    countTokens(input);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
