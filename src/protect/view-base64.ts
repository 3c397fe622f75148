/**
 * Base64 views: each run of the base64 alphabet (standard or URL-safe, also
 * wrapped at 64 or 76 columns) long enough to hold a secret, decoded, when
 * it decodes to text. A secret found in it redacts the whole run, since no
 * part of an encoding can be kept without keeping bits of what it encodes.
 * Runs that decode to binary (images, hashes, ciphertext) are dropped after
 * their first few bytes.
 */
import { printableText } from "./decoded-text";
import { textRuns } from "./text-runs";
import type { DerivedView } from "./view";

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
