/**
 * Whether a lowercase word is among the commonest of ordinary language (`src/core/common-words.ts`): a word the tool
 * search does not read as a typo or an abbreviation, and the hard-wrap view does not take for the rest of a token.
 * The set is built on first use, not when an isolate loads a module that may never ask.
 */
import { COMMON_WORDS } from "./common-words";

let words: Set<string> | undefined;

export function isEverydayWord(word: string): boolean {
  words ??= new Set(COMMON_WORDS.split(/\s+/));
  return words.has(word);
}
