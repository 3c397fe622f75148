/**
 * Where memories live in KV. Every namespace level is one key prefix under the
 * authenticated tenant and user, and each memory is one key under it:
 *
 *   mem/{tenant}/{user}/~/{id}                              user
 *   mem/{tenant}/{user}/s/{session}/~/{id}                  session
 *   mem/{tenant}/{user}/s/{session}/t/{task}/~/{id}         task
 *
 * Segments are escaped so that none can contain '/' or '~': a level's own
 * keys are exactly those with its prefix and one more segment, so a prefix
 * listing returns one level and nothing deeper, and no id can name another
 * level or another tenant's key.
 */
import { failWith, ok, type Result } from "../core/problem";
import * as z from "zod";
import { MEMORY_LIMITS } from "./limits";

export type Level = "user" | "session" | "task";
export const LEVELS = ["user", "session", "task"] as const;

/** Who reads: the credential's tenant and user, and optionally the session and task of the turn. */
export interface Scope {
  tenant: string;
  user: string;
  session?: string;
  task?: string;
}

/** One level of one user's memory. */
export interface Namespace {
  tenant: string;
  user: string;
  level: Level;
  session?: string;
  task?: string;
}

/** A session or task id as the API accepts it. */
export const ScopeId = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]+$/, "use letters, digits, '_', '.', ':' or '-'")
  .min(1)
  .max(MEMORY_LIMITS.scopeIdChars);

/** Memory ids: time-ordered, so a level lists oldest first. */
export const MemoryId = z.string().regex(/^[0-9a-z]{9}[0-9a-f]{12}$/, "not a memory id");

let lastIdTime = 0;

/**
 * A millisecond timestamp (base 36) and 48 random bits. Within an isolate the
 * timestamp part never repeats or goes back (a burst borrows the next
 * milliseconds), so one batch lists in the order it was written.
 */
export function newMemoryId(now: number): string {
  lastIdTime = Math.max(now, lastIdTime + 1);
  const random = crypto.getRandomValues(new Uint8Array(6));
  return lastIdTime.toString(36).padStart(9, "0").slice(-9) + [...random].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Percent-escapes everything but letters, digits, '_', '.', ':' and '-' (so never '/', '~' or '%'). */
export function segment(value: string): string {
  if (value === "") throw new Error("an empty key segment");
  let out = "";
  for (const char of value) {
    if (/^[A-Za-z0-9_.:-]$/.test(char)) out += char;
    else for (const byte of new TextEncoder().encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export function levelPrefix(ns: Namespace): string {
  const base = `mem/${segment(ns.tenant)}/${segment(ns.user)}/`;
  switch (ns.level) {
    case "user":
      return `${base}~/`;
    case "session":
      return `${base}s/${segment(required(ns.session, "session"))}/~/`;
    case "task":
      return `${base}s/${segment(required(ns.session, "session"))}/t/${segment(required(ns.task, "task"))}/~/`;
  }
}

/** KV's limit on a key. */
export const MAX_KEY_BYTES = 512;

export function memoryKey(ns: Namespace, id: string): string {
  const key = levelPrefix(ns) + id;
  if (new TextEncoder().encode(key).length > MAX_KEY_BYTES) throw new Error("memory key longer than KV allows");
  return key;
}

/** The id of a key listed under `prefix`, or null for anything that is not one of this level's memories. */
export function idUnder(prefix: string, key: string): string | null {
  if (!key.startsWith(prefix)) return null;
  const id = key.slice(prefix.length);
  return MemoryId.safeParse(id).success ? id : null;
}

/** The levels a reader at `scope` sees, most specific first: its task, its session, its user; never a sibling. */
export function chainOf(scope: Scope): Namespace[] {
  const { tenant, user, session, task } = scope;
  const chain: Namespace[] = [];
  if (session !== undefined && task !== undefined) chain.push({ tenant, user, level: "task", session, task });
  if (session !== undefined) chain.push({ tenant, user, level: "session", session });
  chain.push({ tenant, user, level: "user" });
  return chain;
}

/** The namespace `level` names for this owner, or why the ids given do not fit it. */
export function namespaceFor(
  owner: { tenant: string; user: string },
  level: Level,
  ids: { session?: string | undefined; task?: string | undefined },
): Result<Namespace, string> {
  const { session, task } = ids;
  switch (level) {
    case "user":
      if (session !== undefined || task !== undefined) return failWith("level 'user' takes no session or task");
      return ok({ ...owner, level });
    case "session":
      if (session === undefined) return failWith("level 'session' needs a session");
      if (task !== undefined) return failWith("level 'session' takes no task; use level 'task'");
      return ok({ ...owner, level, session });
    case "task":
      if (session === undefined || task === undefined) return failWith("level 'task' needs a session and a task");
      return ok({ ...owner, level, session, task });
  }
}

function required(value: string | undefined, name: string): string {
  if (value === undefined) throw new Error(`a ${name} level needs a ${name} id`);
  return value;
}
