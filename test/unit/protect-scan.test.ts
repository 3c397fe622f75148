import fc from "fast-check";
import { describe, expect, it } from "vitest";
// The scan's own parts, below the face (src/protect/index.ts): the keyword automaton, the code units, the rules, entropy.
import { charCodes } from "../../src/protect/char-codes";
import { KeywordFinder } from "../../src/protect/keyword-finder";
import { SECRET_RULES } from "../../src/protect/rules";
import { DEFAULT_REDACTION_POLICY, secretGroups, secretSpan } from "../../src/protect/rules/rule";
import { shannonEntropy } from "../../src/protect/rules/values";
import { findSecretSpans, type SecretSpan } from "../../src/protect/scan";
import { NEGATIVE_SAMPLES, SECRET_SAMPLES } from "../fixtures/secret-corpus";

const SEED = 20261123;

/** Every rule over the whole text, as the scanner worked before it learned to look only near keywords and runs. */
function scanEverywhere(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  for (const rule of SECRET_RULES) {
    if (rule.pii !== undefined && !DEFAULT_REDACTION_POLICY.pii[rule.pii]) continue;
    const pattern = new RegExp(rule.pattern.source, rule.pattern.flags);
    const groups = secretGroups(rule.pattern);
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const { start, end } = secretSpan(match, groups);
      if (end > start && (rule.accept?.(text.slice(start, end), match, text) ?? true)) spans.push({ rule: rule.id, priority: rule.priority, start, end });
      else pattern.lastIndex = Math.max(match.index + 1, start);
      if (match[0].length === 0) pattern.lastIndex++;
    }
  }
  return spans;
}

const key = (spans: readonly SecretSpan[]) => spans.map((s) => `${s.rule}@${s.start}-${s.end}`).sort();

describe("the scanner's shortcuts", () => {
  it("find exactly what every rule run over the whole text finds, on every corpus text", () => {
    for (const sample of [...SECRET_SAMPLES.filter((s) => s.policy === undefined), ...NEGATIVE_SAMPLES]) {
      expect(key(findSecretSpans(sample.text, DEFAULT_REDACTION_POLICY)), sample.id).toEqual(key(scanEverywhere(sample.text)));
    }
  });

  it("find exactly the same on texts stitched from corpus pieces and noise", () => {
    const pieces = [...SECRET_SAMPLES, ...NEGATIVE_SAMPLES].map((s) => s.text);
    const piece = fc.tuple(fc.constantFrom(...pieces), fc.nat(), fc.nat()).map(([text, a, b]) => text.slice(Math.min(a, b) % (text.length + 1), Math.max(a, b) % (text.length + 1)));
    const noise = fc.string({ unit: fc.constantFrom(..."aZ09 :=_-./\n\"'\\%&#@xXkKsS"), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, noise), { maxLength: 8 }), (parts) => {
        const text = parts.join("");
        expect(key(findSecretSpans(text, DEFAULT_REDACTION_POLICY))).toEqual(key(scanEverywhere(text)));
      }),
      { seed: SEED, numRuns: 400 },
    );
  });
});

describe("KeywordFinder", () => {
  const keywords = ["sk-", "sk-ant-", "key", "apikey", "--", "-u", "--user", ":aa", "@", "private key"];
  const finder = new KeywordFinder(keywords);

  function naive(text: string): Map<string, number[]> {
    const found = new Map<string, number[]>();
    for (const keyword of keywords) {
      const starts: number[] = [];
      for (let i = 0; i + keyword.length <= text.length; i++) {
        const piece = text.slice(i, i + keyword.length);
        if (/^[\x00-\x7f]*$/.test(piece) && piece.toLowerCase() === keyword) starts.push(i);
      }
      if (starts.length > 0) found.set(keyword, starts);
    }
    return found;
  }

  it("finds every occurrence of every keyword, overlapping ones too, case aside, at its offset in the original", () => {
    const unit = fc.constantFrom("s", "k", "-", "a", "n", "t", "e", "y", "p", "i", "u", "r", ":", "@", " ", "K", "S", "A", "İ", "é", "\u200b");
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 60 }), (text) => {
        expect(new Map([...finder.find(charCodes(text))].sort())).toEqual(new Map([...naive(text)].sort()));
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  it("refuses keywords it could not match", () => {
    expect(() => new KeywordFinder(["Key"])).toThrow(/lower-case ASCII/);
    expect(() => new KeywordFinder(["clé"])).toThrow(/lower-case ASCII/);
  });
});

describe("charCodes", () => {
  it("gives every code unit of any text, ASCII stretches and the rest, surrogates included", () => {
    const unit = fc.constantFrom("a", "Z", " ", "\n", "é", "中", "😀", "\u200b", "р");
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 9000 }), fc.nat(5000), (text, asciiRun) => {
        const sample = `${"x".repeat(asciiRun)}${text}`;
        expect(Array.from(charCodes(sample))).toEqual(Array.from({ length: sample.length }, (_, i) => sample.charCodeAt(i)));
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});

describe("shannonEntropy", () => {
  it("counts characters, not code units, and leaves its ASCII table clean when a value turns out not to be ASCII", () => {
    expect(shannonEntropy("aabb")).toBe(1);
    // Three characters, one of them a surrogate pair: log2(3) bits, not the two code units' four-way split.
    expect(shannonEntropy("ab😀")).toBeCloseTo(Math.log2(3), 12);
    expect(shannonEntropy("aaab€")).toBeCloseTo(-(0.6 * Math.log2(0.6) + 2 * 0.2 * Math.log2(0.2)), 12);
    expect(shannonEntropy("ab")).toBe(1);
    expect(shannonEntropy("a".repeat(40))).toBe(0);
  });
});
