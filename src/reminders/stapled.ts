/**
 * Stapled state notes (docs/reminders.md, "Stapled notes"; issue 13 part 3): a typed registry of the notes the runtime
 * staples to the user's message about the state of this turn — files the user uploaded, items the user @-mentioned,
 * what the agent's model must not mention, whether it sees the message's images.
 * Each kind has a place in a fixed order, a rule for when it appears, and a renderer; everything that comes from
 * outside (a file's name and type, an item's title and content) passes the trust boundary before it is rendered.
 */
import { markerTitle } from "../core/neutralize";
import { openTag } from "../core/runtime-tag";
import { admitText, type SecretHit } from "../protect";
import { LIMITS } from "../protocol/limits";
import type { Mention, Upload } from "../protocol/http";
import type { ContextData } from "../protocol/context-data";

/** The kinds, in the order their notes appear (after the context markers, last in the appendix). */
export const STAPLED_ORDER = ["uploads", "mentions", "mounts", "dont_mention", "images"] as const;
export type StapledKind = (typeof STAPLED_ORDER)[number];

/** A mention as resolved through its provider's `get`: the item, none (not found), or why it could not be read. */
export type ResolvedMention = Mention & ({ item: ContextData } | { item: null } | { error: string });

/** What the notes are made from: this turn's state, already read. */
export interface StapledInput {
  /** The turn carries a user message: stapled notes ride only on one. */
  message: boolean;
  uploads: readonly Upload[];
  mentions: readonly ResolvedMention[];
  /** The folders apps mount for the agent, and the digest of the mounts last noted for this agent in this conversation (null: never). */
  mounts: { agent: string; list: readonly Mount[]; lastDigest: string | null };
  /** The agent's don't-mention list, and the digest of the list last noted for this agent in this conversation (null: never). */
  dontMention: { agent: string; list: readonly string[]; lastDigest: string | null };
  /** Images on this message, and whether the agent's model sees images (unset: the agent does not say, and no note is made). */
  images: { count: number; seen: boolean | undefined };
  nonce: string | null | undefined;
}

/** A folder an app mounts for the agent. */
export interface Mount {
  app: string;
  path: string;
  permissions: readonly string[];
  description?: string | undefined;
}

export interface StapledNote {
  kind: StapledKind;
  /** Why it appears (the evidence's and the event's reason): never the content. */
  reason: string;
  /** The note's body, past the trust boundary; `renderStapled` wraps it in the runtime's tag. */
  text: string;
  /** Secrets the trust boundary took out of what the note shows (a mentioned item's), by where they were: for the evidence. */
  hits?: (SecretHit & { id: string })[];
}

interface StapledKindDef {
  /** When it appears: only when something changed. */
  when(input: StapledInput): boolean;
  render(input: StapledInput): StapledNote;
}

const one = (s: string, max: number, nonce: string | null | undefined) => markerTitle(s, max, nonce);

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) (v /= 1024), u++;
  return `${v.toFixed(1)} ${units[u]} (${bytes} bytes)`;
}

function where(upload: Upload, nonce: string | null | undefined): string {
  const ref = upload.ref;
  if ("tool" in ref) return `read it with the tool ${one(ref.tool, 200, nonce)}`;
  return `stored as artifact ${one(ref.id, 200, nonce)} (${one(ref.pointer, 400, nonce)})`;
}

export const STAPLED: { readonly [K in StapledKind]: StapledKindDef } = {
  // Every message that carries uploads says so; the file's content is never in the note.
  uploads: {
    when: (i) => i.message && i.uploads.length > 0,
    render: (i) => ({
      kind: "uploads",
      reason: `${i.uploads.length} file(s) uploaded`,
      text: [
        `The user uploaded ${i.uploads.length === 1 ? "a file" : `${i.uploads.length} files`} with this message. ${i.uploads.length === 1 ? "Its" : "Their"} content is not shown here: read it only if the task needs it.`,
        ...i.uploads.map((u) => `- "${one(u.name, LIMITS.titleChars, i.nonce)}" (${one(u.type, 128, i.nonce)}, ${size(u.sizeBytes)}): ${where(u, i.nonce)}.`),
      ].join("\n"),
    }),
  },
  // Every message that carries mentions: the item as it is now, for this turn only (not attached, not tracked).
  mentions: {
    when: (i) => i.message && i.mentions.length > 0,
    render: (i) => {
      const hits: NonNullable<StapledNote["hits"]> = [];
      const texts = i.mentions.map((m) => mentionText(m, i.nonce, hits));
      return {
        kind: "mentions",
        reason: `${i.mentions.length} item(s) mentioned: ${i.mentions.map((m) => `${m.context}#${m.itemId}`).join(", ")}`,
        text: [
          `The user @-mentioned ${i.mentions.length === 1 ? "an item" : `${i.mentions.length} items`} in this message. What each is now (for this message only; it is not attached and will not be updated):`,
          ...texts,
        ].join("\n\n"),
        ...(hits.length ? { hits } : {}),
      };
    },
  },
  // The first message with mounts, and again only when they change (all unmounted included), per agent.
  mounts: {
    when: (i) => i.message && listDigest(i.mounts.list.map(mountKey)) !== (i.mounts.lastDigest ?? "none"),
    render: (i) => ({
      kind: "mounts",
      reason: digestReason(i.mounts.list.length ? `${i.mounts.list.length} mount(s)` : "all unmounted", i.mounts.agent, i.mounts.list.map(mountKey)),
      text: i.mounts.list.length
        ? [
            "These folders are mounted for you; use them only as each one allows (this holds until told otherwise):",
            ...i.mounts.list.map((m) => `- ${one(admitText(m.path, { nonce: i.nonce }).text, LIMITS.mountPathChars, i.nonce)} (from ${one(m.app, LIMITS.nameChars, i.nonce)}): ${allowed(m.permissions)}${m.description ? ` — ${one(admitText(m.description, { nonce: i.nonce }).text, LIMITS.titleChars, i.nonce)}` : ""}`),
          ].join("\n")
        : "No folders are mounted any more: the folders mounted earlier are no longer available.",
    }),
  },
  // The first message with a list, and again only when the list changes (emptied included), per agent.
  dont_mention: {
    when: (i) => i.message && listDigest(i.dontMention.list) !== (i.dontMention.lastDigest ?? "none"),
    render: (i) => ({
      kind: "dont_mention",
      reason: digestReason(i.dontMention.list.length ? `${i.dontMention.list.length} item(s)` : "list cleared", i.dontMention.agent, i.dontMention.list),
      text: i.dontMention.list.length
        ? [
            `Do not mention the following to the user, in any reply, unless the user asks about them directly (this holds until told otherwise):`,
            ...i.dontMention.list.map((w) => `- ${one(admitText(w, { nonce: i.nonce }).text, LIMITS.dontMentionChars, i.nonce)}`),
          ].join("\n")
        : "The earlier list of things not to mention no longer applies.",
    }),
  },
  // Every message that carries images, for an agent that says whether its model sees them.
  images: {
    when: (i) => i.message && i.images.count > 0 && i.images.seen !== undefined,
    render: (i) => {
      const n = i.images.count === 1 ? "the image" : `the ${i.images.count} images`;
      return {
        kind: "images",
        reason: `${i.images.count} image(s), ${i.images.seen ? "seen directly" : "not visible: need a tool"}`,
        text: i.images.seen
          ? `The user shared ${i.images.count === 1 ? "an image" : `${i.images.count} images`} with this message; you can see ${n} directly.`
          : `The user shared ${i.images.count === 1 ? "an image" : `${i.images.count} images`} with this message, but you cannot see ${n} directly: use a tool that reads images if one is offered, or tell the user you cannot see ${i.images.count === 1 ? "it" : "them"}. Do not guess what ${i.images.count === 1 ? "it shows" : "they show"}.`,
      };
    },
  },
};

/** A digest of a don't-mention list, to tell when it changed ("none" for an empty list); not a secret. */
export function listDigest(list: readonly string[]): string {
  if (list.length === 0) return "none";
  let h = 0xcbf29ce484222325n;
  for (const c of new TextEncoder().encode(JSON.stringify(list))) h = BigInt.asUintN(64, (h ^ BigInt(c)) * 0x100000001b3n);
  return h.toString(16).padStart(16, "0");
}

/** The reason a note about a list (don't-mention, mounts) records: it names the agent and the list's digest, which the next turns compare with. */
function digestReason(what: string, agent: string, list: readonly string[]): string {
  return `${what} for ${agent} (digest ${listDigest(list)})`;
}

/** A mount as its digest sees it: a change to any part of it is a change of the mounts. */
function mountKey(m: Mount): string {
  return JSON.stringify([m.app, m.path, [...m.permissions].sort(), m.description ?? ""]);
}

const PERMISSION_WORDS: Record<string, string> = { read: "read", write: "write", execute: "run programs" };

function allowed(permissions: readonly string[]): string {
  const words = ["read", "write", "execute"].filter((p) => permissions.includes(p)).map((p) => PERMISSION_WORDS[p]!);
  return `you may ${words.join(", ")}${permissions.includes("write") ? "" : "; do not change anything in it"}`;
}

/** The digest a recorded reason carries, when it is for this agent. */
export function digestOf(reason: string, agent: string): string | null {
  const m = / for (\S+) \(digest ([0-9a-f]{16}|none)\)$/.exec(reason);
  return m && m[1] === agent ? m[2]! : null;
}

function mentionText(m: ResolvedMention, nonce: string | null | undefined, hits: NonNullable<StapledNote["hits"]>): string {
  const at = `${one(m.context, 200, nonce)} item ${one(m.itemId, LIMITS.itemIdChars, nonce)}`;
  if ("error" in m) return `[Mention: ${at}: could not be read (${one(m.error, 200, nonce)})]`;
  if (m.item === null) return `[Mention: ${at}: not found]`;
  // The item is an app's content: its secrets are redacted, and the evidence records each (rule and keyed hash).
  const id = `mention:${m.context}#${m.itemId}`;
  const admit = (text: string) => {
    const admitted = admitText(text, { nonce });
    for (const hit of admitted.hits) hits.push({ ...hit, id });
    return admitted.text;
  };
  const title = one(admit(m.item.title ?? m.itemId), LIMITS.titleChars, nonce);
  const admitted = admit(m.item.content);
  const cut = admitted.length > LIMITS.mentionContentChars;
  const content = cut ? `${admitted.slice(0, LIMITS.mentionContentChars)}\n[… ${admitted.length - LIMITS.mentionContentChars} more characters not shown]` : admitted;
  return `[Mention: ${title} (${at})]\n${content}`;
}

/** The notes this turn carries, in the registry's order. */
export function stapledNotes(input: StapledInput): StapledNote[] {
  return STAPLED_ORDER.flatMap((kind) => (STAPLED[kind].when(input) ? [STAPLED[kind].render(input)] : []));
}

/** A note as the model reads it: the runtime's reminder tag with the conversation's nonce, and its kind. */
export function renderStapled(note: StapledNote, nonce: string | null | undefined): string {
  return `${openTag("system_reminder", nonce, `kind="${note.kind}"`)}\n${note.text}\n</system_reminder>`;
}
