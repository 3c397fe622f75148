import { ok, type Result } from "../../core/problem";
import { diffLedger, type Observation } from "../../core/ledger";
import { openTag } from "../../core/runtime-tag";
import { markerTitle } from "../../core/neutralize";
import { hooksAt, runChain } from "../../hooks/chain";
import { admitText } from "../../protect";
import { LIMITS } from "../../protocol/limits";
import type { HookPayload } from "../../protocol/hooks";
import type { AssemblyDraft } from "./view-assembly";
import type { Reminder } from "./remind";
import type { Staged } from "./stage";

type Blocks = HookPayload<"assembled">["blocks"];
type Change = { remove: Set<string>; add: Reminder[] };
type Draft = Omit<AssemblyDraft, "hookBlocks">;

/**
 * The `assembled` hooks (docs/hooks.md): they see the blocks about to be stapled to the user's message — the contexts
 * and resources to inject, memory, task state, the runtime's notes — and may remove some or add their own. A removed
 * context is withheld this turn (the model keeps what it last saw; the evidence says missing, `withheld`); what a hook
 * adds passes the trust boundary and rides last on the message, in the runtime's tag naming the hook.
 */
export async function hookBlocks(d: Draft): Promise<Result<Staged<Partial<AssemblyDraft>>>> {
  const hooks = hooksAt(d.hooks.hooks, "assembled").length;
  if (d.continuation || hooks === 0) return ok({ out: {}, decided: { hooks: 0 } });
  const blocks = blocksOf(d);
  const outcome = await runChain<"assembled", Change>(d.hooks, "assembled", { remove: new Set(), add: [] }, {
    payload: (change) => ({ blocks: blocks.filter((b) => !change.remove.has(b.id)) }),
    apply: (change, decision, hook) => {
      if (decision.action !== "change") return { state: change };
      for (const id of decision.remove ?? []) change.remove.add(id);
      for (const block of decision.add ?? []) change.add.push({ kind: "hook", reason: `added by ${hook.id}`, text: renderAdded(hook.id, block, d.nonce) });
      return { state: change };
    },
    // Failing closed, the turn carries none of the blocks the hook would have checked: contexts withheld, memory, notes.
    closed: () => ({ action: "change", remove: blocks.map((b) => b.id) }),
  });
  const { remove, add } = outcome.state;
  if (remove.size === 0 && add.length === 0) return ok({ out: {}, decided: { hooks } });
  const withheld = (o: Observation): Observation => (remove.has(o.key) && o.status === "present" ? { key: o.key, kind: o.kind, status: "missing", reason: "withheld", detail: "a hook withheld it this turn" } : o);
  return ok({
    out: {
      observations: d.observations.map(withheld),
      extra: { ...d.extra, sections: d.extra.sections.map((s) => ({ ...s, entries: s.entries.filter((e) => !remove.has(`${s.kind}:${e.id}`)) })) },
      reminders: d.reminders.filter((r) => !remove.has(`note:${r.kind}`)),
      stapled: [...d.stapled.filter((r) => !remove.has(`note:${r.kind}`)), ...add],
    },
    decided: { hooks, removed: [...remove], added: add.length },
  });
}

/** The blocks as a hook reads them: ids it can name back (a context's key, `memory:<id>`, `note:<kind>`), text cut at hookTextChars. */
function blocksOf(d: Draft): Blocks {
  const cut = (text: string) => ({ text: text.slice(0, LIMITS.hookTextChars), truncated: text.length > LIMITS.hookTextChars });
  const injected = diffLedger(d.scope.db.ledger.list(), d.observations).changes.flatMap((c) => (c.change === "removed" ? [] : [{ id: c.key, kind: c.kind, title: c.title, ...cut(c.content) }]));
  const sections = d.extra.sections.flatMap((s) => s.entries.map((e) => ({ id: `${s.kind}:${e.id}`, kind: s.kind, ...cut(e.text) })));
  const notes = [...d.reminders, ...d.stapled].map((r) => ({ id: `note:${r.kind}`, kind: "note", ...cut(r.text) }));
  return [...injected, ...sections, ...notes];
}

function renderAdded(hook: string, block: { title: string; content: string }, nonce: string | null): string {
  const title = markerTitle(admitText(block.title, { nonce }).text, LIMITS.titleChars, nonce);
  return `${openTag("system_reminder", nonce, `kind="hook" source="${hook}"`)}\n[${title}]\n${admitText(block.content, { nonce }).text}\n</system_reminder>`;
}
