/**
 * Base64 views: each run of the base64 alphabet (standard or URL-safe, also
 * wrapped at 64 or 76 columns) long enough to hold a secret, decoded, when
 * it decodes to text. A secret found in it redacts the whole run, since no
 * part of an encoding can be kept without keeping bits of what it encodes.
 * Runs that decode to binary (images, hashes, ciphertext) are dropped after
 * their first few bytes.
 */
import { printableText } from "./decoded-text";
import type { DerivedView } from "./view";

/** Shorter runs cannot hold a secret any rule would accept (16 characters are 12 bytes). */
const SHORTEST_RUN = 16;
/** A line break continues a run only after a full line of base64, as encoders wrap it. */
const SHORTEST_WRAPPED_LINE = 40;
/** Bytes looked at before the whole run is decoded. */
const PROBE = 48;

const ALPHABET = new Uint8Array(128);
for (const char of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_") ALPHABET[char.charCodeAt(0)] = 1;
const isBase64 = (code: number) => code < 128 && ALPHABET[code] === 1;

export interface Base64Run {
  start: number;
  end: number;
  /** The run without line breaks or padding. */
  body: string;
}

export function base64Runs(text: string): Base64Run[] {
  const runs: Base64Run[] = [];
  for (let i = 0; i < text.length; ) {
    if (!isBase64(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    const pieces: string[] = [];
    let lineStart = i;
    for (;;) {
      while (i < text.length && isBase64(text.charCodeAt(i))) i++;
      pieces.push(text.slice(lineStart, i));
      const lineLength = i - lineStart;
      const breakLength = text.charCodeAt(i) === 0x0d && text.charCodeAt(i + 1) === 0x0a ? 2 : text.charCodeAt(i) === 0x0a ? 1 : 0;
      if (breakLength === 0 || lineLength < SHORTEST_WRAPPED_LINE || !isBase64(text.charCodeAt(i + breakLength))) break;
      i += breakLength;
      lineStart = i;
    }
    let end = i;
    while (end < text.length && end - i < 2 && text.charCodeAt(end) === 0x3d) end++;
    const body = pieces.join("");
    if (body.length >= SHORTEST_RUN) runs.push({ start, end, body });
    i = end === i ? i : end;
  }
  return runs;
}

function decode(body: string): Uint8Array | null {
  const standard = body.replace(/-/g, "+").replace(/_/g, "/");
  const usable = standard.length - (standard.length % 4 === 1 ? 1 : 0);
  try {
    const binary = atob(standard.slice(0, usable).padEnd(Math.ceil(usable / 4) * 4, "="));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

/** The decoded text of a run, or null when it is not text. */
export function decodedBase64(body: string): string | null {
  const probe = decode(body.slice(0, PROBE));
  if (probe === null || printableText(probe.subarray(0, probe.length - 2)) === null) return null;
  const bytes = decode(body);
  return bytes === null ? null : printableText(bytes);
}

export function base64Views(text: string): DerivedView[] {
  const views: DerivedView[] = [];
  for (const run of base64Runs(text)) {
    // Hex is a base64 alphabet too; its runs are the hex view's to read.
    if (/^[0-9a-fA-F]+$/.test(run.body)) continue;
    const decoded = decodedBase64(run.body);
    if (decoded === null) continue;
    views.push({ text: decoded, starts: new Uint32Array(decoded.length).fill(run.start), ends: new Uint32Array(decoded.length).fill(run.end) });
  }
  return views;
}
