/**
 * The skills menu in the system message: one line per skill, sorted by name so the cached prefix never changes
 * with the order apps registered them in. Pure and deterministic: the same skills and budget give the same bytes.
 *
 * Over budget, it degrades in steps and says so, never silently: first the longest descriptions are shortened
 * toward a common length (never below DESCRIPTION_FLOOR characters, cut at a word and ending with "…"); if still
 * over, the last lines keep their name only and a closing line says how many descriptions were left out. If even
 * the names don't fit, every name is still listed: a menu that hides a skill is worse than one over budget.
 */
export interface SkillEntry {
  /** Qualified "app:skill". */
  name: string;
  description: string;
}

export interface MenuCut {
  name: string;
  reason: "shortened" | "name_only";
  /** Characters of the (whitespace-collapsed) description kept, without the "…". */
  keptChars: number;
  droppedChars: number;
}

export interface SkillsMenu {
  text: string;
  tokens: number;
  /** Every skill whose description was shortened or left out, in menu order. */
  cut: MenuCut[];
}

export const SKILLS_MENU_HEADER = "Skills (read a skill's manual with read_skill before doing that kind of task):";
/** Shorter than this, a description stops saying what the skill is for. */
export const DESCRIPTION_FLOOR = 60;

interface Line {
  name: string;
  description: string;
}

export function renderSkillsMenu(skills: readonly SkillEntry[], budgetTokens: number, countTokens: (text: string) => number): SkillsMenu {
  if (skills.length === 0) return { text: "", tokens: 0, cut: [] };
  const lines: Line[] = skills.map((s) => ({ name: collapse(s.name), description: collapse(s.description) })).sort(byNameThenDescription);
  const n = lines.length;
  const fits = (cap: number, nameOnly: number) => countTokens(render(lines, cap, nameOnly).text) <= budgetTokens;
  const longest = lines.reduce((max, l) => Math.max(max, l.description.length), 0);

  // Largest common cap on description length that fits with `nameOnly` name-only lines, or null if the floor doesn't.
  const bestCap = (nameOnly: number): number | null => {
    if (fits(longest, nameOnly)) return longest;
    if (!fits(DESCRIPTION_FLOOR, nameOnly)) return null;
    let lo = DESCRIPTION_FLOOR;
    let hi = longest;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (fits(mid, nameOnly)) lo = mid;
      else hi = mid;
    }
    return lo;
  };

  const cap = bestCap(0);
  if (cap !== null) return finish(render(lines, cap, 0), countTokens);
  if (!fits(DESCRIPTION_FLOOR, n)) return finish(render(lines, DESCRIPTION_FLOOR, n), countTokens);
  // Fewest name-only lines (from the end of the order) with which the floor fits; then the largest cap that fits with them.
  let lo = 0;
  let hi = n;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (fits(DESCRIPTION_FLOOR, mid)) hi = mid;
    else lo = mid;
  }
  return finish(render(lines, bestCap(hi) ?? DESCRIPTION_FLOOR, hi), countTokens);
}

/** The menu with descriptions capped at `cap` characters and the last `nameOnly` lines reduced to their name. */
function render(lines: readonly Line[], cap: number, nameOnly: number): { text: string; cut: MenuCut[] } {
  const out = [SKILLS_MENU_HEADER];
  const cut: MenuCut[] = [];
  let leftOut = 0;
  lines.forEach((line, i) => {
    const full = line.description.length;
    if (i >= lines.length - nameOnly) {
      out.push(`- ${line.name}`);
      if (full > 0) {
        leftOut++;
        cut.push({ name: line.name, reason: "name_only", keptChars: 0, droppedChars: full });
      }
      return;
    }
    if (full === 0) {
      out.push(`- ${line.name}`);
      return;
    }
    const kept = shorten(line.description, cap);
    out.push(`- ${line.name}: ${kept === line.description ? kept : `${kept}…`}`);
    if (kept !== line.description) cut.push({ name: line.name, reason: "shortened", keptChars: kept.length, droppedChars: full - kept.length });
  });
  if (leftOut > 0) {
    const descriptions = leftOut === 1 ? "1 skill description was" : `${leftOut} skill descriptions were`;
    out.push(`(${descriptions} left out to fit the menu's budget; read_skill still opens every skill listed.)`);
  }
  return { text: out.join("\n"), cut };
}

/**
 * At most `cap` characters (the caller adds "…"), never fewer than DESCRIPTION_FLOOR: cut at the last word boundary
 * that keeps the floor and half the room, trailing punctuation off; with none, inside the word at `cap`.
 */
function shorten(description: string, cap: number): string {
  if (description.length <= cap) return description;
  const room = description.slice(0, cap);
  const least = Math.max(DESCRIPTION_FLOOR, room.length / 2);
  const atWord = room.slice(0, Math.max(0, room.lastIndexOf(" "))).replace(/[\s,;:.\-–—(]+$/u, "");
  return atWord.length >= least ? atWord : room;
}

function finish(menu: { text: string; cut: MenuCut[] }, countTokens: (text: string) => number): SkillsMenu {
  return { text: menu.text, tokens: countTokens(menu.text), cut: menu.cut };
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function byNameThenDescription(a: Line, b: Line): number {
  return compare(a.name, b.name) || compare(a.description, b.description);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
