import { ok, type Result } from "../../core/problem";
import { countTokens } from "../../core/tokens";
import { admitJsonText, admitText, type SecretHit } from "../../protect";
import type { SkillSpec, ToolSpec } from "../../protocol/tools";
import { offerTools as listTools, type OfferInput, type ToolOffer } from "../../tools/offer";
import { offersHistorySearch } from "../history-search-store";
import { renderSkillsMenu, type SkillsMenu } from "../../tools/skills-menu";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Ran } from "./run-tools";
import type { Staged } from "./stage";

export interface Offered {
  /** The agent works with tools: the system message says how to call them and how their results arrive. */
  hasTools: boolean;
  /** The tool list passed beside the messages, past the trust boundary. */
  offer: ToolOffer;
  /** What the list was made from: a compaction that writes the first summary makes it again, with search_history. */
  listed: OfferInput;
  /** The skills menu of the system message, within about 1 % of the window. */
  skillsMenu: SkillsMenu;
  menuBudget: number;
  /** Skills the model read, and where each manual is in the history. */
  linked: { name: string; seq: number }[];
  /** Secrets redacted from the apps' tool and skill descriptions, by tool or skill. */
  toolHits: (SecretHit & { id: string })[];
}

/** The menu's budget when no window is known: 1 % of a 128k window. */
const DEFAULT_MENU_TOKENS = 1_280;

/**
 * What the model can do this turn: the tool list (bound tools, the runtime's own, then those loaded from the
 * catalog, in a fixed order) and the skills menu. What the apps wrote in them is data from outside: it passes the
 * trust boundary like a context, once per version.
 */
export function offerTools(d: Loaded & Pulled & Ran): Result<Staged<Offered>> {
  const { scope, toolbox, nonce, toolRun } = d;
  const toolHits: Offered["toolHits"] = [];
  const admit = (spec: ToolSpec): ToolSpec => {
    const raw = JSON.stringify(spec);
    const known = scope.cache.tools.get(spec.name);
    if (known?.raw === raw) return known.spec;
    const description = admitText(spec.description, { nonce });
    const schema = admitJsonText(JSON.stringify(spec.inputSchema), { nonce });
    for (const hit of [...description.hits, ...schema.hits]) toolHits.push({ ...hit, id: `tool:${spec.name}` });
    const admitted = { ...spec, description: description.text, inputSchema: JSON.parse(schema.text) as ToolSpec["inputSchema"] };
    scope.cache.tools.set(spec.name, { raw, spec: admitted });
    return admitted;
  };
  const skills = toolbox.skills.map((s): SkillSpec => {
    const description = admitText(s.description, { nonce });
    for (const hit of description.hits) toolHits.push({ ...hit, id: `skill:${s.name}` });
    return { name: s.name, description: description.text };
  });
  // Tools loaded this turn join the list now: the model can call them in its next step.
  // Only an agent with a catalog loads tools, and only one with skills links them: the others read neither table.
  const loaded = toolbox.catalog.length ? [...scope.db.toolState.loaded(), ...toolRun.loaded.map((l) => l.name)] : [];
  // Only the catalog's loaded tools are shown: the rest need not pass the boundary.
  const shown = new Set(loaded);
  const catalog = toolbox.catalog.map((t) => (shown.has(t.name) ? admit(t) : t));
  // The subagents' descriptions are their apps' text: `delegate`'s description lists them.
  const subagents = (toolbox.subagents ?? []).map((s) => {
    const description = admitText(s.description || s.name, { nonce });
    for (const hit of description.hits) toolHits.push({ ...hit, id: `subagent:${s.id}` });
    return { id: s.id, description: description.text };
  });
  const searchHistory = offersHistorySearch(toolbox.agent, d.history.everCovered());
  const listed: OfferInput = { bound: toolbox.bound.map(admit), catalog, loaded, skills, browseContexts: toolbox.agent.browseContexts, searchHistory, subagents };
  const offer = listTools(listed);
  const budget = d.policy.contextWindow === undefined ? DEFAULT_MENU_TOKENS : Math.floor(d.policy.contextWindow / 100);
  const skillsMenu = renderSkillsMenu(skills, budget, countTokens);
  return ok({
    out: { hasTools: hasTools(d, offer), offer, listed, skillsMenu, menuBudget: budget, linked: skills.length ? scope.db.toolState.linked() : [], toolHits },
    decided: {
      bound: offer.offered.filter((t) => t.source === "bound").length,
      runtime: offer.offered.filter((t) => t.source === "runtime").map((t) => t.name),
      loaded: offer.offered.filter((t) => t.source === "loaded").length,
      catalog: toolbox.catalog.length,
      tokens: offer.tokens,
      skills: skills.length,
      menuTokens: skillsMenu.tokens,
      menuCut: skillsMenu.cut.length,
      ...(toolbox.unknown.length ? { unknown: toolbox.unknown } : {}),
    },
  });
}

/** The list with search_history in its place (a compaction about to write the first summary offers it at once). */
export function withHistorySearch(d: Pulled & Pick<Offered, "listed">): Pick<Offered, "offer" | "hasTools"> {
  const offer = listTools({ ...d.listed, searchHistory: true });
  return { offer, hasTools: hasTools(d, offer) };
}

/** The agent works with tools: it names some (they may be the frontend's own), or the runtime offers any. */
function hasTools(d: Pulled, offer: ToolOffer): boolean {
  return d.agent.tools.length > 0 || offer.tools.length > 0;
}
