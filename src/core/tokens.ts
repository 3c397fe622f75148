/**
 * A calibrated token estimate, pure and synchronous, used everywhere a token
 * figure is reported. Plain chars/4 under-counts code, identifiers and CJK; this
 * counts words in ~4-character pieces, every punctuation mark on its own, and
 * each CJK character as one token, which tracks BPE tokenizers closely on prose
 * and errs high on high-entropy text (the safe side for budgets).
 */
const PIECE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{M}\p{N}_]+|[^\s\p{L}\p{M}\p{N}_]/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

export function countTokens(text: string): number {
  let tokens = 0;
  for (const match of text.matchAll(PIECE)) {
    const piece = match[0];
    tokens += CJK.test(piece) || piece.length <= 4 ? 1 : Math.ceil(piece.length / 4);
  }
  return tokens;
}

/** Per-message framing the chat formats add (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
