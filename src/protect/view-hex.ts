/**
 * Hex views: the bytes of a token written as hex, read back as text. Two
 * shapes: a continuous run of at least 32 hex digits (also `xxd -p`, wrapped
 * across lines), and at least 16 bytes written one by one with a separator
 * (`67 68 70`, `67:68:70`, `0x67, 0x68`). (`\x67\x68` is the folded view's.)
 * Each decoded character maps to its own two digits. Hashes and ids decode
 * to binary and are dropped.
 */
import { printableText } from "./decoded-text";
import { textRuns } from "./text-runs";
import type { DerivedView } from "./view";

const FEWEST_BYTES = 16;
const isHex = (code: number) => (code >= 48 && code <= 57) || (code >= 97 && code <= 102) || (code >= 65 && code <= 70);
const hexValue = (code: number) => (code <= 57 ? code - 48 : (code | 32) - 87);

/** Where each byte's two digits start in a continuous run, skipping its line breaks. */
function runBytes(text: string, start: number, end: number): number[] {
  const at: number[] = [];
  for (let i = start; i + 1 < end; ) {
    if (!isHex(text.charCodeAt(i))) i++;
    else if (!isHex(text.charCodeAt(i + 1))) i++;
    else {
      at.push(i);
      i += 2;
    }
  }
  return at;
}

/** Bytes written one by one: two digits, optionally after `0x`, then a space, `:`, `-` or `, `, again and again. */
function separatedBytes(text: string, start: number, end: number): number[] {
  const at: number[] = [];
  for (let i = start; i < end; ) {
    if (text.charCodeAt(i) === 0x30 && (text.charCodeAt(i + 1) | 32) === 0x78) i += 2;
    if (!isHex(text.charCodeAt(i)) || !isHex(text.charCodeAt(i + 1)) || isHex(text.charCodeAt(i + 2))) break;
    at.push(i);
    i += 2;
    const separator = text.charCodeAt(i);
    if (separator !== 0x20 && separator !== 0x3a && separator !== 0x2c && separator !== 0x2d) break;
    i += separator === 0x2c && text.charCodeAt(i + 1) === 0x20 ? 2 : 1;
  }
  return at;
}

function view(text: string, at: readonly number[]): DerivedView | null {
  if (at.length < FEWEST_BYTES) return null;
  const bytes = Uint8Array.from(at, (i) => hexValue(text.charCodeAt(i)) * 16 + hexValue(text.charCodeAt(i + 1)));
  const decoded = printableText(bytes, true);
  if (decoded === null) return null;
  return { text: decoded, starts: Uint32Array.from(at), ends: Uint32Array.from(at, (i) => i + 2) };
}

export function hexViews(text: string): DerivedView[] {
  const runs = textRuns(text);
  const views: (DerivedView | null)[] = [
    ...runs.hex.map(([start, end]) => view(text, runBytes(text, start, end))),
    ...runs.hexBytes.map(([start, end]) => view(text, separatedBytes(text, start, end))),
  ];
  return views.filter((v): v is DerivedView => v !== null);
}
