/**
 * declareFields: a step names the fields it needs from upstream artifacts and
 * gets those values only, never the payloads.
 *
 * Field requests (one grammar, three forms):
 *   - `"market_size"`: a top-level key of an object artifact, taken literally
 *     (any characters; it must not start with `/`).
 *   - `"/results/0/url"`: an RFC 6901 JSON Pointer (`~1` is `/`, `~0` is `~`),
 *     from the artifact's root. `"/"` is the key `""`; the whole artifact (`""`)
 *     cannot be asked for.
 *   - `{ "across": "/results", "field": "url" }`: the list at the JSON Pointer
 *     `across` (`""` when the artifact itself is the list), and from each item
 *     the key or JSON Pointer `field`: a list aligned with the items, `null`
 *     where an item lacks it. `field` may be a list of keys/pointers, giving one
 *     object per item with the ones it has. The value's name is `as`, or
 *     `/results[].url` (`[].url` for a root list, `/results[]/a/b` for a
 *     pointer, `/results[].{title,url}` for several).
 *
 * Resolution walks the refs in order and reads each artifact once. The first
 * artifact in which a field resolves wins (`from` says which; `shadowed` lists
 * later artifacts that also had it). A field no artifact has is in `missing`
 * with a reason. A plain key matches objects only: for a list artifact the
 * miss says how to ask across it.
 */
import * as z from "zod";
import { fail, ok, type Result } from "../core/problem";
import { countTokens } from "../core/tokens";
import type { Owner } from "../protocol/owner";
import { isPlainObject, lookup, type Lookup } from "../core/json-pointer";
import { parseJsonPointer } from "../protocol/json-pointer";
import { ARTIFACT_LIMITS } from "../protocol/artifact-limits";
import { readArtifact, type ReadArtifact } from "./read";
import { ArtifactRef, ArtifactVersion, parsePointer, Sha256Hex, ArtifactPointer, formatPointer, type PointerParts } from "../protocol/artifacts";

const KeyOrPath = z
  .string()
  .min(1)
  .max(ARTIFACT_LIMITS.fieldChars)
  .refine((s) => !s.startsWith("/") || parseJsonPointer(s) !== null, "a JSON Pointer (RFC 6901): '~' must be followed by '0' or '1'");

export const AcrossField = z
  .object({
    across: z
      .string()
      .max(ARTIFACT_LIMITS.fieldChars)
      .refine((s) => parseJsonPointer(s) !== null, "a JSON Pointer to a list: '' for the artifact itself, '/results' for a key"),
    field: z.union([KeyOrPath, z.array(KeyOrPath).min(1).max(ARTIFACT_LIMITS.fieldsPerItem)]),
    as: z.string().min(1).max(ARTIFACT_LIMITS.fieldChars).optional(),
  })
  .strict();
export type AcrossField = z.infer<typeof AcrossField>;

export const FieldRequest = z.union([KeyOrPath, AcrossField]);
export type FieldRequest = z.infer<typeof FieldRequest>;

export const FieldRequests = z
  .array(FieldRequest)
  .min(1)
  .max(ARTIFACT_LIMITS.fieldsPerResolve)
  .superRefine((fields, ctx) => {
    const seen = new Set<string>();
    fields.forEach((f, i) => {
      const name = fieldName(f);
      if (seen.has(name)) ctx.addIssue({ code: "custom", path: [i], message: `two fields are named '${name}'; give one an 'as'` });
      seen.add(name);
    });
  });

/**
 * A ref as a caller passes it back: the pointer and the version it expects,
 * optionally the sha256 it saw. Any other fields of a full `ArtifactRef` may
 * ride along (a stored ref can be passed as it is) and are ignored.
 */
export const RefToResolve = ArtifactRef.partial().extend({ pointer: ArtifactPointer, version: ArtifactVersion, sha256: Sha256Hex.optional() }).strict();
export type RefToResolve = z.infer<typeof RefToResolve>;

export const ResolveBody = z
  .object({
    refs: z.array(RefToResolve).min(1).max(ARTIFACT_LIMITS.refsPerResolve),
    fields: FieldRequests,
  })
  .strict();
export type ResolveBody = z.infer<typeof ResolveBody>;

export type MissingReason = "not-found" | "not-a-list" | "too-large" | "over-budget";
export interface MissingField {
  field: string;
  reason: MissingReason;
  detail: string;
}

export interface ResolvedFields {
  /** Field name → value, in the order the fields were asked for. */
  values: Record<string, unknown>;
  /** Field name → pointer of the artifact the value came from (the first that had it). */
  from: Record<string, string>;
  /** Field name → later artifacts that also had it and lost to `from`. */
  shadowed: Record<string, string[]>;
  missing: MissingField[];
  /** countTokens of JSON.stringify(values): what the model reads. */
  tokens: number;
}

/** The name a field's value is reported under. */
export function fieldName(field: FieldRequest): string {
  if (typeof field === "string") return field;
  if (field.as !== undefined) return field.as;
  const one = (f: string) => (f.startsWith("/") ? f : `.${f}`);
  return `${field.across}[]${typeof field.field === "string" ? one(field.field) : `.{${field.field.join(",")}}`}`;
}

type Selector = { key: string } | { tokens: string[] };

function selector(text: string): Selector {
  return text.startsWith("/") ? { tokens: parseJsonPointer(text) ?? [] } : { key: text };
}

function select(doc: unknown, s: Selector): Lookup {
  if ("tokens" in s) return lookup(doc, s.tokens);
  if (isPlainObject(doc)) return Object.hasOwn(doc, s.key) ? { found: true, value: doc[s.key] } : { found: false, reason: `no key '${s.key}'` };
  return { found: false, reason: `it is ${doc === null ? "null" : Array.isArray(doc) ? "a list" : typeof doc}, not an object` };
}

interface Compiled {
  name: string;
  resolve(doc: unknown): Lookup & { notAList?: boolean };
}

function compile(field: FieldRequest): Compiled {
  const name = fieldName(field);
  if (typeof field === "string") {
    if (field.startsWith("/")) {
      const tokens = parseJsonPointer(field) ?? [];
      return { name, resolve: (doc) => lookup(doc, tokens) };
    }
    return {
      name,
      resolve: (doc) => {
        const found = select(doc, { key: field });
        if (found.found || !Array.isArray(doc)) return found;
        const inItems = doc.some((item) => isPlainObject(item) && Object.hasOwn(item, field));
        return {
          found: false,
          reason: inItems
            ? `it is a list whose items have '${field}': ask {"across": "", "field": ${JSON.stringify(field)}}`
            : "it is a list, not an object",
        };
      },
    };
  }
  const listAt = parseJsonPointer(field.across) ?? [];
  const where = field.across === "" ? "the artifact" : field.across;
  const many = Array.isArray(field.field);
  const selectors = (Array.isArray(field.field) ? field.field : [field.field]).map((f) => ({ text: f, s: selector(f) }));
  return {
    name,
    resolve: (doc) => {
      const list = lookup(doc, listAt);
      if (!list.found) return list;
      if (!Array.isArray(list.value)) return { found: false, notAList: true, reason: `${where} is ${list.value === null ? "null" : typeof list.value}, not a list` };
      let hits = 0;
      const value = list.value.map((item) => {
        if (!many) {
          const got = select(item, selectors[0]!.s);
          if (got.found) hits++;
          return got.found ? got.value : null;
        }
        const picked: [string, unknown][] = [];
        for (const { text, s } of selectors) {
          const got = select(item, s);
          if (got.found) picked.push([text, got.value]);
        }
        if (picked.length > 0) hits++;
        return Object.fromEntries(picked);
      });
      if (hits === 0) {
        const what = selectors.map((x) => `'${x.text}'`).join(" or ");
        return { found: false, reason: list.value.length === 0 ? `${where} is an empty list` : `no item of ${where} has ${what}` };
      }
      return { found: true, value };
    },
  };
}

interface Won {
  pointer: string;
  value: unknown;
  json: string | null;
}

/**
 * Field requests resolved against artifacts offered one at a time, in ref
 * order (so only one payload is held at once). Pure.
 */
export class FieldResolution {
  private readonly fields: Compiled[];
  private readonly won = new Map<string, Won>();
  private readonly shadowed = new Map<string, string[]>();
  private readonly misses = new Map<string, { notAList: boolean; reasons: string[] }>();

  constructor(fields: readonly FieldRequest[]) {
    this.fields = fields.map(compile);
  }

  /** Resolves every field against one artifact's data. */
  offer(pointer: string, data: unknown): void {
    for (const field of this.fields) {
      const got = field.resolve(data);
      const winner = this.won.get(field.name);
      if (!got.found) {
        if (winner) continue;
        const miss = this.misses.get(field.name) ?? { notAList: false, reasons: [] };
        miss.notAList ||= got.notAList === true;
        miss.reasons.push(`in ${pointer}, ${got.reason}`);
        this.misses.set(field.name, miss);
      } else if (winner) {
        this.shadowed.set(field.name, [...(this.shadowed.get(field.name) ?? []), pointer]);
      } else {
        const json = JSON.stringify(got.value);
        // A value too large to hand over is not kept: only the fact that this artifact had it.
        const fits = json.length <= ARTIFACT_LIMITS.valueChars;
        this.won.set(field.name, { pointer, value: fits ? got.value : null, json: fits ? json : null });
      }
    }
  }

  finish(): ResolvedFields {
    const values: [string, unknown][] = [];
    const from: [string, string][] = [];
    const missing: MissingField[] = [];
    let used = 2; // `{}`
    for (const { name } of this.fields) {
      const won = this.won.get(name);
      if (!won) {
        const miss = this.misses.get(name);
        const reasons = miss?.reasons ?? [];
        const detail = reasons.length === 0 ? "no artifact was read" : reasons.slice(0, 3).join("; ") + (reasons.length > 3 ? `; and ${reasons.length - 3} more` : "");
        missing.push({ field: name, reason: miss?.notAList ? "not-a-list" : "not-found", detail });
        continue;
      }
      if (won.json === null) {
        missing.push({ field: name, reason: "too-large", detail: `in ${won.pointer} its value is over ${ARTIFACT_LIMITS.valueChars} characters as JSON; ask for parts of it` });
        continue;
      }
      const cost = JSON.stringify(name).length + 1 + won.json.length + 1;
      if (used + cost > ARTIFACT_LIMITS.resolvedChars) {
        missing.push({ field: name, reason: "over-budget", detail: `the values asked for exceed ${ARTIFACT_LIMITS.resolvedChars} characters; ask for this one separately` });
        continue;
      }
      used += cost;
      values.push([name, won.value]);
      from.push([name, won.pointer]);
    }
    const valuesObject = Object.fromEntries(values);
    const shadowed = Object.fromEntries([...this.shadowed].filter(([name]) => values.some(([n]) => n === name)));
    return { values: valuesObject, from: Object.fromEntries(from), shadowed, missing, tokens: countTokens(JSON.stringify(valuesObject)) };
  }
}

/** Reads one artifact version (its parsed data and the sha256 of its stored bytes), or a problem. */
export type ArtifactReader = (target: PointerParts) => Promise<Result<ReadArtifact>>;

export interface Resolution extends ResolvedFields {
  /** Pointers of the artifacts read, each once, in order. */
  read: string[];
}

/**
 * Resolves `fields` against the artifacts `refs` name, in order, through
 * `reader`. Every ref is checked before anything is read: its pointer must
 * be in this conversation (else 404) and name the version the ref expects
 * (else 409). Each artifact is then read at most once (a per-call cache keyed
 * by pointer, which carries the version), and a ref whose sha256 differs from
 * the stored bytes' is a 409.
 */
export async function resolveWith(reader: ArtifactReader, conversationId: string, refs: readonly RefToResolve[], fields: readonly FieldRequest[]): Promise<Result<Resolution>> {
  const targets: { ref: RefToResolve; parts: PointerParts; pointer: string }[] = [];
  for (const ref of refs) {
    const parts = parsePointer(ref.pointer);
    if (!parts) return fail("invalid-request", `'${ref.pointer}' is not an artifact pointer`);
    if (parts.conversation !== conversationId) return fail("not-found", `no artifact ${ref.pointer} in this conversation`);
    if (parts.version !== ref.version) {
      return fail("conflict", `the ref for ${ref.pointer} expects version ${ref.version}, but its pointer names v${parts.version}: use the ref as it was returned`);
    }
    targets.push({ ref, parts, pointer: formatPointer(parts) });
  }
  const resolution = new FieldResolution(fields);
  const cache = new Map<string, string>(); // pointer → sha256 of what was read
  const read: string[] = [];
  for (const { ref, parts, pointer } of targets) {
    let sha256 = cache.get(pointer);
    if (sha256 === undefined) {
      const artifact = await reader(parts);
      if (!artifact.ok) return artifact;
      sha256 = artifact.value.sha256;
      cache.set(pointer, sha256);
      read.push(pointer);
      if (ref.sha256 === undefined || ref.sha256 === sha256) resolution.offer(pointer, artifact.value.data);
    }
    if (ref.sha256 !== undefined && ref.sha256 !== sha256) {
      return fail("conflict", `${pointer} is stored with sha256 ${sha256.slice(0, 16)}…, not the ${ref.sha256.slice(0, 16)}… the ref expects: the artifact changed since the ref was made`);
    }
  }
  return ok({ ...resolution.finish(), read });
}

/**
 * For the turn: resolves `fields` from the caller's artifacts in R2, with
 * the key derived from `owner` (a pointer from another tenant or user names
 * nothing here). Input is validated as the HTTP route validates it.
 */
export async function resolveFields(bucket: R2Bucket, owner: Owner, conversationId: string, refs: readonly RefToResolve[], fields: readonly FieldRequest[]): Promise<Result<Resolution>> {
  const body = ResolveBody.safeParse({ refs, fields });
  if (!body.success) {
    return fail("invalid-request", "the refs or fields are not valid", body.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })));
  }
  return resolveWith((parts) => readArtifact(bucket, owner, parts, { stale: "conflict" }), conversationId, body.data.refs, body.data.fields);
}

