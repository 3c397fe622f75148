/**
 * Skill manuals and references live in R2, one object per skill, keyed by the hub's owner, the app and
 * the skill: the hub's SQLite keeps only what the skills menu needs (name, description, sizes, digest).
 */
import type { Owner } from "../protocol/owner";
import type { z } from "zod";
import type { SkillDeclaration } from "../protocol/methods";
import type { SkillContent } from "../protocol/tools";

type ParsedSkill = z.output<typeof SkillDeclaration>;
interface StoredSkill {
  manual: string;
  references: { name: string; content: string }[];
}

export function skillKey(owner: Owner, app: string, skill: string): string {
  return ["skills", owner.tenant, owner.user, app, skill].map(encodeURIComponent).join("/");
}

/**
 * Writes the skills whose content changed (by sha256) and returns every declared skill's digest.
 * Runs before the registry names them, so a registered skill always has its manual in R2.
 */
export async function writeSkills(
  bucket: R2Bucket,
  owner: Owner,
  app: string,
  skills: readonly ParsedSkill[],
  stored: ReadonlyMap<string, string>,
): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  await Promise.all(
    skills.map(async (skill) => {
      const body = JSON.stringify({ manual: skill.manual, references: skill.references } satisfies StoredSkill);
      const sha256 = await digest(body);
      digests.set(skill.name, sha256);
      if (stored.get(skill.name) === sha256) return;
      await bucket.put(skillKey(owner, app, skill.name), body, {
        httpMetadata: { contentType: "application/json" },
        customMetadata: { sha256 },
      });
    }),
  );
  return digests;
}

/** Deletes what an app no longer declares. */
export async function deleteSkills(bucket: R2Bucket, owner: Owner, app: string, names: readonly string[]): Promise<void> {
  if (names.length > 0) await bucket.delete(names.map((name) => skillKey(owner, app, name)));
}

export async function readStoredSkill(bucket: R2Bucket, owner: Owner, app: string, name: string): Promise<Omit<SkillContent, "name" | "description"> | null> {
  const object = await bucket.get(skillKey(owner, app, name));
  if (!object) return null;
  const stored = JSON.parse(await object.text()) as StoredSkill;
  return { manual: stored.manual, references: stored.references };
}

async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
