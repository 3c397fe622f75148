/**
 * Hex views: the bytes of a token written as hex, read back as text. Two
 * shapes: a continuous run of at least 32 hex digits (also `xxd -p`, wrapped
 * across lines), and at least 16 bytes written one by one with a separator
 * (`67 68 70`, `67:68:70`, `0x67, 0x68`). (`\x67\x68` is the folded view's.)
 * Each decoded character maps to its own two digits. Hashes and ids decode
 * to binary and are dropped.
 */
import { printableText } from "./decoded-text";
import type { DerivedView } from "./view";

const SHORTEST_RUN = 32;
const FEWEST_BYTES = 16;

const isHex = (code: number) => (code >= 48 && code <= 57) || (code >= 97 && code <= 102) || (code >= 65 && code <= 70);
const hexValue = (code: number) => (code <= 57 ? code - 48 : (code | 32) - 87);

interface HexBytes {
  /** Where each byte's two digits start. */
  at: number[];
}

function hexLength(text: string, from: number): number {
  let i = from;
  while (i < text.length && isHex(text.charCodeAt(i))) i++;
  return i - from;
}

/** A continuous run from `from`, following line breaks after a full run (as `xxd -p` wraps). */
function continuousRun(text: string, from: number): { bytes: HexBytes; end: number } {
  const at: number[] = [];
  let i = from;
  for (;;) {
    const length = hexLength(text, i);
    for (let k = 0; k + 1 < length; k += 2) at.push(i + k);
    i += length;
    const lineBreak = text.charCodeAt(i) === 0x0a ? 1 : text.charCodeAt(i) === 0x0d && text.charCodeAt(i + 1) === 0x0a ? 2 : 0;
    if (lineBreak === 0 || length < SHORTEST_RUN || hexLength(text, i + lineBreak) < 2) break;
    i += lineBreak;
  }
  return { bytes: { at }, end: i };
}

/** Bytes written one by one: two digits, optionally after `0x`, then a separator, again and again. */
function separatedBytes(text: string, from: number): { bytes: HexBytes; end: number } {
  const at: number[] = [];
  let i = from;
  let end = from;
  for (;;) {
    if (text.charCodeAt(i) === 0x30 && (text.charCodeAt(i + 1) | 32) === 0x78) i += 2;
    if (hexLength(text, i) !== 2) break;
    at.push(i);
    end = i + 2;
    i = end;
    const separator = text.charCodeAt(i);
    if (separator !== 0x20 && separator !== 0x3a && separator !== 0x2c && separator !== 0x2d) break;
    i++;
    if (separator === 0x2c && text.charCodeAt(i) === 0x20) i++;
  }
  return { bytes: { at }, end };
}

function view(text: string, bytes: HexBytes): DerivedView | null {
  const values = Uint8Array.from(bytes.at, (at) => hexValue(text.charCodeAt(at)) * 16 + hexValue(text.charCodeAt(at + 1)));
  const decoded = printableText(values, true);
  if (decoded === null) return null;
  return { text: decoded, starts: Uint32Array.from(bytes.at), ends: Uint32Array.from(bytes.at, (at) => at + 2) };
}

export function hexViews(text: string): DerivedView[] {
  const views: DerivedView[] = [];
  for (let i = 0; i < text.length; ) {
    const code = text.charCodeAt(i);
    if (!isHex(code) || (i > 0 && isHex(text.charCodeAt(i - 1)))) {
      i++;
      continue;
    }
    const length = hexLength(text, i);
    const found = length >= SHORTEST_RUN ? continuousRun(text, i) : length === 2 || (length === 1 && code === 0x30) ? separatedBytes(text, i) : null;
    if (found !== null && found.bytes.at.length >= FEWEST_BYTES) {
      const decoded = view(text, found.bytes);
      if (decoded !== null) views.push(decoded);
      i = found.end;
    } else i += Math.max(length, 1);
  }
  return views;
}
