/** Decoded bytes as text, when they are text: UTF-8 with no control characters but tab and line breaks. Binary (images, hashes, ciphertext) gives null. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function printableText(bytes: Uint8Array, asciiOnly = false): string | null {
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
