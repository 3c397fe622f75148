/**
 * docs/evidence.md stays true to the code: its event tables list exactly the event types the runtime emits (read from
 * the source), and its envelope tables exactly the fields of the `ContextEnvelope` schema (walked, to every leaf). A
 * new event type or envelope field fails here until it is documented; a documented one the code no longer has fails too.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ContextEnvelope } from "../../src/protocol/evidence";

const ROOT = new URL("../../", import.meta.url).pathname;
const DOC = readFileSync(join(ROOT, "docs/evidence.md"), "utf8");

/**
 * The `events.add` calls whose type is not a string literal, by file and argument, with the types they can take. A new
 * call with a computed type fails the test until it is listed here (and its types are in the file, so the list cannot
 * go stale unnoticed).
 */
const COMPUTED_TYPES: Record<string, readonly string[]> = {
  // const type = i.marker === "removed" ? "context.removed" : "context.injection.applied"
  "src/conversation/turn/commit.ts type": ["context.removed", "context.injection.applied"],
  // The MCP session's stream buffer (`mcp_stream_events`, for `Last-Event-ID`), not the conversation's events.
  "src/conversation/mcp-sessions.ts streamId": [],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** The first `count` top-level arguments of the call whose "(" is at `open`, as source text. */
function callArguments(source: string, open: number, count: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = open + 1;
  for (let i = open + 1; i < source.length && args.length < count; i++) {
    const ch = source[i]!;
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === "`") quote = ch;
    else if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) {
      if (depth === 0) return [...args, source.slice(start, i).trim()];
      depth--;
    } else if (ch === "," && depth === 0) {
      args.push(source.slice(start, i).trim());
      start = i + 1;
    }
  }
  return args;
}

/** Every event type an `events.add(turnId, type, …)` call under src/ can store. */
function emittedTypes(): { types: Set<string>; unlisted: string[] } {
  const types = new Set<string>();
  const unlisted: string[] = [];
  for (const file of sourceFiles(join(ROOT, "src"))) {
    const source = readFileSync(file, "utf8");
    const path = relative(ROOT, file);
    for (const match of source.matchAll(/\bevents\.add\(/g)) {
      const type = callArguments(source, match.index + match[0].length - 1, 2)[1] ?? "";
      const literals = [...type.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
      if (literals.length) for (const t of literals) types.add(t);
      else if (COMPUTED_TYPES[`${path} ${type}`]) {
        for (const t of COMPUTED_TYPES[`${path} ${type}`]!) {
          expect(source, `${path} should still name ${t}`).toContain(`"${t}"`);
          types.add(t);
        }
      } else unlisted.push(`${path}: events.add(…, ${type}, …)`);
    }
  }
  return { types, unlisted };
}

/** The text of the doc's `## title` section, up to the next `## `. */
function section(title: string): string {
  const start = DOC.indexOf(`\n## ${title}\n`);
  expect(start, `docs/evidence.md has a "## ${title}" section`).toBeGreaterThan(-1);
  const end = DOC.indexOf("\n## ", start + 1);
  return DOC.slice(start, end === -1 ? undefined : end);
}

/** The names in backticks that open the rows of the section's tables (`| \`name\` | …`). */
function tableNames(text: string): string[] {
  return [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

/** Every field path of a schema: `a`, `a.b`, `a[].c`, down to the leaves (a record's keys are data, not fields). */
function fieldPaths(schema: z.core.$ZodType, prefix = ""): string[] {
  const def = schema._zod.def as z.core.$ZodTypeDef & { innerType?: z.core.$ZodType; element?: z.core.$ZodType; options?: z.core.$ZodType[]; shape?: Record<string, z.core.$ZodType> };
  switch (def.type) {
    case "optional":
    case "nullable":
    case "readonly":
    case "default":
      return fieldPaths(def.innerType!, prefix);
    case "array":
      return fieldPaths(def.element!, `${prefix}[]`);
    case "union":
      return [...new Set(def.options!.flatMap((o) => fieldPaths(o, prefix)))];
    case "object":
      return Object.entries(def.shape!).flatMap(([key, value]) => {
        const path = prefix ? `${prefix}.${key}` : key;
        return [path, ...fieldPaths(value, path)];
      });
    default:
      return [];
  }
}

describe("docs/evidence.md", () => {
  it("lists exactly the event types the runtime emits", () => {
    const { types, unlisted } = emittedTypes();
    expect(unlisted, "events.add calls with a computed type: list them in COMPUTED_TYPES").toEqual([]);
    // A sanity floor: the scan found the calls (a broken regex would find none and compare two empty sets).
    expect(types.size).toBeGreaterThan(30);
    const documented = tableNames(section("Events"));
    expect(documented.filter((t, i) => documented.indexOf(t) !== i), "documented twice").toEqual([]);
    expect([...types].filter((t) => !documented.includes(t)).sort(), "emitted but not documented").toEqual([]);
    expect(documented.filter((t) => !types.has(t)).sort(), "documented but never emitted").toEqual([]);
  });

  it("names every event type in the one dotted, lower-case style", () => {
    for (const t of emittedTypes().types) expect(t).toMatch(/^[a-z_]+(\.[a-z_]+)+$/);
  });

  it("notes each renamed event beside its former name, and the new names are the ones emitted", () => {
    const renamed = [...section("Renamed events").matchAll(/^\| `([^`]+)` \| `([^`]+)` \|/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(renamed.map(([now]) => now).sort()).toEqual(["context.include", "context.post_compact", "context.pre_compact"]);
    const { types } = emittedTypes();
    for (const [now, former] of renamed) {
      expect(types.has(now)).toBe(true);
      expect(types.has(former)).toBe(false);
    }
  });

  it("documents exactly the envelope's fields, to every leaf of the schema", () => {
    const fields = fieldPaths(ContextEnvelope);
    expect(fields).toContain("selection.omitted[].reason");
    expect(fields).toContain("hooks.calls[].verdict");
    const documented = tableNames(section("The envelope"));
    expect(documented.filter((f, i) => documented.indexOf(f) !== i), "documented twice").toEqual([]);
    expect(fields.filter((f) => !documented.includes(f)), "in the schema but not documented").toEqual([]);
    expect(documented.filter((f) => !fields.includes(f)), "documented but not in the schema").toEqual([]);
  });

  it("explains every reason a context is left out", () => {
    const text = section("Why a context is left out");
    for (const reason of (ContextEnvelope.shape.selection.shape.omitted.element.shape.reason as z.ZodEnum).options) expect(tableNames(text)).toContain(reason);
  });
});
