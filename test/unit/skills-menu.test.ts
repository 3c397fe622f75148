import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DESCRIPTION_FLOOR, SKILLS_MENU_HEADER, renderSkillsMenu, type SkillEntry } from "../../src/tools/skills-menu";
import { countTokens } from "../../src/core/tokens";

const SKILLS: SkillEntry[] = [
  { name: "sheets:pivot-report", description: "Build a pivot table report from a sales export: pick the dimensions, check the totals against the source, and chart the result for a slide." },
  { name: "calendar:plan-week", description: "Plan the user's week:\n  block focus time, move conflicts, and leave room for travel between meetings." },
  { name: "docs:contract-review", description: "Review a contract for unusual clauses, missing signatures and dates that do not match the cover letter; list each finding with its clause number so a lawyer can check it quickly." },
  { name: "mail:triage", description: "Sort the inbox into reply, read later and archive." },
  { name: "github:release", description: "Cut a release: changelog from merged pull requests since the last tag, version bump, tag and release notes, then watch the workflow until it is green." },
];

const full = renderSkillsMenu(SKILLS, 10_000, countTokens);
const lines = (text: string) => text.split("\n");

describe("renderSkillsMenu", () => {
  it("renders nothing for no skills", () => {
    expect(renderSkillsMenu([], 100, countTokens)).toEqual({ text: "", tokens: 0, cut: [] });
  });

  it("lists one line per skill under the header, sorted by name, whitespace collapsed", () => {
    expect(full.cut).toEqual([]);
    expect(full.tokens).toBe(countTokens(full.text));
    const [header, ...rest] = lines(full.text);
    expect(header).toBe(SKILLS_MENU_HEADER);
    expect(rest.map((line) => line.slice(2, line.indexOf(": ", 2)))).toEqual(["calendar:plan-week", "docs:contract-review", "github:release", "mail:triage", "sheets:pivot-report"]);
    expect(rest[0]).toBe("- calendar:plan-week: Plan the user's week: block focus time, move conflicts, and leave room for travel between meetings.");
  });

  it("gives the same bytes whatever the input order", () => {
    const reversed = renderSkillsMenu([...SKILLS].reverse(), 10_000, countTokens);
    expect(reversed).toEqual(full);
    for (const budget of [40, 70, 90]) {
      expect(renderSkillsMenu([...SKILLS].reverse(), budget, countTokens)).toEqual(renderSkillsMenu(SKILLS, budget, countTokens));
    }
  });

  it("shortens the longest descriptions first, at a word, and reports each", () => {
    const budget = full.tokens - 25;
    const menu = renderSkillsMenu(SKILLS, budget, countTokens);
    expect(menu.tokens).toBeLessThanOrEqual(budget);
    expect(menu.cut.length).toBeGreaterThan(0);
    expect(menu.cut.every((cut) => cut.reason === "shortened")).toBe(true);
    // The short ones are untouched; the contract review, the longest, is among those cut.
    expect(menu.text).toContain("- mail:triage: Sort the inbox into reply, read later and archive.");
    expect(menu.cut.map((cut) => cut.name)).toContain("docs:contract-review");
    for (const cut of menu.cut) {
      const original = SKILLS.find((s) => s.name === cut.name)!.description.replace(/\s+/g, " ");
      const line = lines(menu.text).find((l) => l.startsWith(`- ${cut.name}: `))!;
      const kept = line.slice(`- ${cut.name}: `.length, -1);
      expect(line.endsWith("…")).toBe(true);
      expect(original.startsWith(kept)).toBe(true);
      expect(original[kept.length]).toMatch(/[\s,;:.]/);
      expect(cut.keptChars).toBe(kept.length);
      expect(cut.keptChars + cut.droppedChars).toBe(original.length);
      expect(kept.length).toBeGreaterThanOrEqual(DESCRIPTION_FLOOR);
    }
  });

  it("keeps only names at the end of the order when shortening is not enough, and says so", () => {
    const floorMenu = renderSkillsMenu(SKILLS, 0, countTokens);
    const budget = Math.floor((full.tokens + floorMenu.tokens) / 2) - 20;
    const menu = renderSkillsMenu(SKILLS, budget, countTokens);
    expect(menu.tokens).toBeLessThanOrEqual(budget);
    const nameOnly = menu.cut.filter((cut) => cut.reason === "name_only").map((cut) => cut.name);
    expect(nameOnly.length).toBeGreaterThan(0);
    expect(nameOnly).toEqual(["calendar:plan-week", "docs:contract-review", "github:release", "mail:triage", "sheets:pivot-report"].slice(-nameOnly.length));
    for (const name of nameOnly) expect(lines(menu.text)).toContain(`- ${name}`);
    const count = nameOnly.length === 1 ? "1 skill description was" : `${nameOnly.length} skill descriptions were`;
    expect(lines(menu.text).at(-1)).toBe(`(${count} left out to fit the menu's budget; read_skill still opens every skill listed.)`);
  });

  it("still lists every name when even names alone are over budget, all reported", () => {
    const menu = renderSkillsMenu(SKILLS, 1, countTokens);
    expect(menu.tokens).toBeGreaterThan(1);
    expect(menu.cut.map((cut) => cut.reason)).toEqual(Array(5).fill("name_only"));
    for (const skill of SKILLS) expect(lines(menu.text)).toContain(`- ${skill.name}`);
    expect(menu.text).toContain("5 skill descriptions were left out");
  });

  it("keeps at least DESCRIPTION_FLOOR characters of each shortened description (issue 20: 60 skills over budget kept 51)", () => {
    const words = "make send read plan sort file note list mail book call task".split(" ");
    const skills = Array.from({ length: 60 }, (_, i) => ({ name: `app:s${String(i).padStart(2, "0")}`, description: Array.from({ length: 30 }, (_, j) => words[(i * 7 + j * 5) % words.length]).join(" ") }));
    for (const budget of [1_000, 1_280, 1_600]) {
      const menu = renderSkillsMenu(skills, budget, countTokens);
      const shortened = menu.cut.filter((c) => c.reason === "shortened");
      expect(shortened.length).toBeGreaterThan(0);
      for (const c of shortened) expect(c.keptChars).toBeGreaterThanOrEqual(DESCRIPTION_FLOOR);
      expect(menu.tokens).toBeLessThanOrEqual(budget);
    }
  });

  it("never drops a skill, respects the budget whenever names fit, and reports every cut", () => {
    const skill = fc.record({
      name: fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[a-z][a-z-]{0,14}$/)).map(([app, s]) => `${app}:${s}`),
      description: fc.array(fc.constantFrom("Draft", "the", "quarterly", "report,", "check", "figures;", "then", "send", "it.", "\n", "reconciliation", "über", "会議"), { maxLength: 60 }).map((w) => w.join(" ")),
    });
    fc.assert(
      fc.property(fc.array(skill, { maxLength: 25 }), fc.integer({ min: 0, max: 1_500 }), (skills, budget) => {
        const menu = renderSkillsMenu(skills, budget, countTokens);
        if (skills.length === 0) return menu.text === "";
        expect(renderSkillsMenu([...skills].reverse(), budget, countTokens)).toEqual(menu);
        const menuLines = lines(menu.text);
        for (const s of skills) expect(menuLines.some((l) => l === `- ${s.name}` || l.startsWith(`- ${s.name}: `))).toBe(true);
        expect(menu.tokens).toBe(countTokens(menu.text));
        const namesOnly = renderSkillsMenu(skills, 0, countTokens);
        if (namesOnly.tokens <= budget) expect(menu.tokens).toBeLessThanOrEqual(budget);
        // Every description is either whole in the text or reported as cut.
        const cutNames = new Set(menu.cut.map((c) => c.name));
        for (const s of skills) {
          const description = s.description.replace(/\s+/g, " ").trim();
          if (description !== "" && !cutNames.has(s.name)) expect(menuLines).toContain(`- ${s.name}: ${description}`);
        }
        for (const c of menu.cut) if (c.reason === "shortened") expect(c.keptChars).toBeGreaterThanOrEqual(DESCRIPTION_FLOOR);
        const leftOut = menu.cut.filter((c) => c.reason === "name_only").length;
        expect(menu.text.includes("left out to fit the menu's budget")).toBe(leftOut > 0);
        return true;
      }),
      { numRuns: 150 },
    );
  });
});
