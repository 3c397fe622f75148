/**
 * The one token count the runtime uses: an upper bound on what OpenAI's o200k tokenizer counts, pure and synchronous,
 * so a budget it enforces holds for the model on any text (see docs/tokens.md). The exact tokenizer would add
 * ~1.2 MB gzipped to the Worker and ~300 ms and ~45 MB of heap to every isolate that counts; this bound carries
 * ~100 KB of the vocabulary instead (src/core/o200k-pieces.ts).
 *
 * o200k splits text into pieces with the pattern below, then merges each piece's bytes pair by pair until no two
 * neighbours form a token. So a piece that is itself a token is one token; any other is at most the most parts its
 * bytes can be cut into when no two one-byte parts side by side form a token (`partsBound`).
 */
import { O200K_PAIRS, O200K_PIECES } from "./o200k-pieces";

/** o200k's pre-tokenizer, as tiktoken and gpt-tokenizer write it. */
const PIECE =
  /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** Built on the first count, not when an isolate loads a module that may never count. */
let vocabulary: { pieces: Set<string>; pairs: Uint8Array } | undefined;

export function countTokens(text: string): number {
  vocabulary ??= { pieces: new Set(O200K_PIECES), pairs: Uint8Array.from(atob(O200K_PAIRS), (c) => c.charCodeAt(0)) };
  const { pieces, pairs } = vocabulary;
  let tokens = 0;
  PIECE.lastIndex = 0;
  for (let m = PIECE.exec(text); m !== null; m = PIECE.exec(text)) {
    const piece = m[0];
    // One character of ASCII is one byte, so one token: the commonest piece, spared the lookup.
    tokens += (piece.length === 1 && piece.charCodeAt(0) < 0x80) || pieces.has(piece) ? 1 : partsBound(piece, pairs);
  }
  return tokens;
}

/**
 * The most tokens byte-pair merging can leave of a piece: its UTF-8 bytes cut into parts, where two one-byte parts
 * may sit side by side only if together they are not a token (else they would have merged). Linear: the best cut of
 * each prefix, ending in a one-byte part (`single`) or a longer one (`multi`).
 */
function partsBound(piece: string, pairs: Uint8Array): number {
  const n = utf8(piece);
  const NONE = -1e9;
  let single = NONE; // the prefix so far, ending in a one-byte part
  let multi = 0; // ... ending in a longer part (or empty)
  let beforeSingle = NONE; // the same two, one byte back (before the first byte, nothing)
  let beforeMulti = NONE;
  for (let i = 0; i < n; i++) {
    const byte = bytes[i]!;
    const apart = i === 0 || (pairs[(bytes[i - 1]! << 5) | (byte >> 3)]! & (1 << (byte & 7))) === 0;
    const nextSingle = (multi > single || !apart ? multi : single) + 1;
    const nextMulti = (beforeSingle > beforeMulti ? beforeSingle : beforeMulti) + 1;
    beforeSingle = single;
    beforeMulti = multi;
    single = nextSingle;
    multi = nextMulti;
  }
  return single > multi ? single : multi;
}

let bytes = new Uint8Array(256);

/** Writes `piece` as UTF-8 into `bytes` (a lone surrogate as U+FFFD, as encoders do); returns the length. */
function utf8(piece: string): number {
  if (bytes.length < piece.length * 3) bytes = new Uint8Array(piece.length * 3);
  let n = 0;
  for (let i = 0; i < piece.length; i++) {
    let c = piece.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < piece.length && (piece.charCodeAt(i + 1) & 0xfc00) === 0xdc00) c = 0x10000 + ((c - 0xd800) << 10) + (piece.charCodeAt(++i) - 0xdc00);
    else if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) bytes[n++] = c;
    else if (c < 0x800) (bytes[n++] = 0xc0 | (c >> 6)), (bytes[n++] = 0x80 | (c & 63));
    else if (c < 0x10000) (bytes[n++] = 0xe0 | (c >> 12)), (bytes[n++] = 0x80 | ((c >> 6) & 63)), (bytes[n++] = 0x80 | (c & 63));
    else (bytes[n++] = 0xf0 | (c >> 18)), (bytes[n++] = 0x80 | ((c >> 12) & 63)), (bytes[n++] = 0x80 | ((c >> 6) & 63)), (bytes[n++] = 0x80 | (c & 63));
  }
  return n;
}

/** Per-message framing the chat formats add (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
