/**
 * A text's UTF-16 code units in a typed array, for the per-character passes
 * (the shared run pass, the keyword automaton). Reading `charCodeAt` costs the
 * engine more once it has seen strings of several representations (flat,
 * concatenated, sliced, one- or two-byte), as a redactor does; a typed array
 * reads the same every time. ASCII stretches are copied natively by
 * `encodeInto` (their UTF-8 is their code units); around other characters,
 * one by one. The last text's codes are kept, so both passes share one copy.
 */

/**
 * One remembered result per pass over a text (its codes here; its runs and keywords in text-runs.ts and
 * scan.ts): several parts of one redaction ask for the same text's, and keeping the last one lets them share
 * it. `forget` drops it, since it may hold the secrets just redacted.
 */
export function rememberLast<T>(compute: (text: string) => T): { of(text: string): T; forget(): void } {
  let lastText: string | null = null;
  let last: T | null = null;
  return {
    of(text) {
      if (text !== lastText || last === null) {
        last = compute(text);
        lastText = text;
      }
      return last;
    },
    forget() {
      lastText = null;
      last = null;
    },
  };
}

const encoder = new TextEncoder();
/** ASCII is looked for a chunk at a time, so a lone `é` costs re-encoding at most this much. */
const CHUNK = 4096;
/** After a chunk that was not ASCII for long, this many characters are copied one by one before looking again (CJK text). */
const BY_HAND = 1024;
const scratch = new Uint8Array(CHUNK * 3);

const remembered = rememberLast(codesOf);
export const charCodes = remembered.of;
/** Drops the remembered text and its codes, which may hold the secrets just redacted. */
export const forgetCharCodes = remembered.forget;

function codesOf(text: string): Uint16Array {
  const codes = new Uint16Array(text.length);
  for (let at = 0; at < text.length; ) {
    const { read, written } = encoder.encodeInto(text.slice(at, at + CHUNK), scratch);
    const ascii = read === written ? read : asciiPrefix(scratch, written);
    codes.set(scratch.subarray(0, ascii), at);
    at += ascii;
    if (ascii === read) continue;
    const stop = Math.min(text.length, at + (ascii < 64 ? BY_HAND : 1));
    for (; at < stop; at++) codes[at] = text.charCodeAt(at);
  }
  return codes;
}

/** How many bytes from the start are ASCII: up to the first non-ASCII character, UTF-8 bytes and code units are the same. */
function asciiPrefix(bytes: Uint8Array, written: number): number {
  let i = 0;
  while (i < written && bytes[i]! < 0x80) i++;
  return i;
}
