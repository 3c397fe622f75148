/**
 * A text's UTF-16 code units in a typed array, for the per-character passes
 * (the shared run pass, the keyword automaton). Reading `charCodeAt` costs the
 * engine more once it has seen strings of several representations (flat,
 * concatenated, sliced, one- or two-byte), as a redactor does; a typed array
 * reads the same every time. ASCII text is copied natively by `encodeInto`
 * (its UTF-8 is its code units); the rest, character by character. The last
 * text's codes are kept, so both passes share one copy.
 */
const encoder = new TextEncoder();

let lastText: string | null = null;
let lastCodes: Uint16Array | null = null;

export function charCodes(text: string): Uint16Array {
  if (text === lastText && lastCodes !== null) return lastCodes;
  const codes = new Uint16Array(text.length);
  const bytes = new Uint8Array(text.length);
  const { read, written } = encoder.encodeInto(text, bytes);
  // Up to the first non-ASCII character, UTF-8 bytes and code units are the same.
  const ascii = read === written ? read : asciiPrefix(bytes, written);
  codes.set(bytes.subarray(0, ascii));
  for (let i = ascii; i < text.length; i++) codes[i] = text.charCodeAt(i);
  lastText = text;
  lastCodes = codes;
  return codes;
}

function asciiPrefix(bytes: Uint8Array, written: number): number {
  let i = 0;
  while (i < written && bytes[i]! < 0x80) i++;
  return i;
}
