/**
 * Every size the artifact layer accepts. An artifact travels in one HTTP body
 * (1 MiB, `LIMITS.httpBodyBytes`), so its stored JSON stays a little under that,
 * leaving room for the envelope (`task`, `type`, `summary`) around `data`.
 */
export const ARTIFACT_LIMITS = {
  /** The stored JSON of one artifact (after redaction), UTF-8 bytes. Larger is a 413. */
  dataBytes: 1_000_000,
  /** How deep `data` may nest (objects and arrays). Deeper is a 400. */
  depth: 64,
  /** A caller's summary, characters. A generated one is cut to this too. */
  summaryChars: 1_000,
  /** Task ids, artifact ids and types: `[A-Za-z0-9_-]`, this long at most. */
  idChars: 64,
  typeChars: 64,
  /** `schemaKeys` on a ref: at most this many keys, and at most this many bytes of them as JSON. */
  schemaKeys: 32,
  schemaKeysBytes: 2_048,
  /** Versions kept per artifact; storing one more deletes the oldest, whose refs then answer 409. */
  versionsKept: 10,
  /** Attempts to allocate a version when other writers keep taking the next one. */
  versionAttempts: 5,
  /** One resolution: refs and field requests it may carry. */
  refsPerResolve: 16,
  fieldsPerResolve: 64,
  /** A field request: a key name or JSON Pointer, characters; fields projected from each list item. */
  fieldChars: 512,
  fieldsPerItem: 16,
  /** One resolved value as JSON, characters; larger values are reported missing (`too-large`). */
  valueChars: 100_000,
  /** All resolved values of one resolution as JSON, characters; values past it are missing (`over-budget`). */
  resolvedChars: 200_000,
  /** R2's own limit on an object's custom metadata, bytes. */
  metadataBytes: 8_192,
} as const;
