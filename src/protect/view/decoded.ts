/**
 * The decoding views: a token written as base64 or hex, read back as text.
 *
 * Base64: each run of the base64 alphabet (standard or URL-safe, also
 * wrapped at 64 or 76 columns) long enough to hold a secret, decoded, when
 * it decodes to text. A secret found in it redacts the whole run, since no
 * part of an encoding can be kept without keeping bits of what it encodes.
 * Runs that decode to binary (images, hashes, ciphertext) are dropped after
 * their first few bytes.
 *
 * Hex: a continuous run of at least 32 hex digits (also `xxd -p`, wrapped
 * across lines), and at least 16 bytes written one by one with a separator
 * (`67 68 70`, `67:68:70`, `0x67, 0x68`). (`\x67\x68` is the folded view's.)
 * Each decoded character maps to its own two digits. Hashes and ids decode
 * to binary and are dropped.
 */
import { textRuns } from "../text-runs";
import type { DerivedView } from "./view";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Decoded bytes as text, when they are text: UTF-8 with no control characters but tab and line breaks. Binary (images, hashes, ciphertext) gives null. */
function printableText(bytes: Uint8Array, asciiOnly = false): string | null {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte < 0x20 ? byte !== 0x09 && byte !== 0x0a && byte !== 0x0d : byte === 0x7f || (asciiOnly && byte > 0x7f)) return null;
  }
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Bytes looked at before the whole run is decoded. */
const PROBE = 48;

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
function decodedBase64(body: string): string | null {
  const probe = decode(body.slice(0, PROBE));
  if (probe === null || printableText(probe.subarray(0, probe.length - 2)) === null) return null;
  const bytes = decode(body);
  return bytes === null ? null : printableText(bytes);
}

export function base64Views(text: string): DerivedView[] {
  const views: DerivedView[] = [];
  for (const [start, end] of textRuns(text).base64) {
    const body = text.slice(start, end).replace(/[\r\n=]/g, "");
    // Hex is a base64 alphabet too; its runs are the hex view's to read.
    if (/^[0-9a-fA-F]+$/.test(body)) continue;
    const decoded = decodedBase64(body);
    if (decoded === null) continue;
    views.push({ text: decoded, starts: new Uint32Array(decoded.length).fill(start), ends: new Uint32Array(decoded.length).fill(end) });
  }
  return views;
}

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
