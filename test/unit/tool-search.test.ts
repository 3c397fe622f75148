import { describe, expect, it } from "vitest";
import { SEARCH_LIMITS, ToolIndex, tokenize, type CatalogTool } from "../../src/tools/catalog-search";
import { stem } from "../../src/core/stem";
import { CATALOG, QUERIES, measureRecall } from "../fixtures/tool-catalog";
import { OUTSIDE_QUERIES, OUTSIDE_TOOLS } from "../fixtures/tool-corpus-outside";
import { OUTSIDE_QUERIES_B, OUTSIDE_TOOLS_B } from "../fixtures/tool-corpus-outside-b";
import { OUTSIDE_QUERIES_C, OUTSIDE_TOOLS_C } from "../fixtures/tool-corpus-outside-c";
import { OUTSIDE_QUERIES_D, OUTSIDE_TOOLS_D } from "../fixtures/tool-corpus-outside-d";
import { OUTSIDE_QUERIES_E, OUTSIDE_TOOLS_E } from "../fixtures/tool-corpus-outside-e";
import { OUTSIDE_QUERIES_F, OUTSIDE_TOOLS_F } from "../fixtures/tool-corpus-outside-f";
import { OUTSIDE_QUERIES_G, OUTSIDE_TOOLS_G } from "../fixtures/tool-corpus-outside-g";
import { measureTools, rate, type Recall } from "../fixtures/outside-tools";
import { fakeEmbedding } from "../fixtures/fake-embedding";
import { embeddingText, FUSION_DEPTH, fuseRankings, rankByCosine, unitVector } from "../../src/tools/semantic-search";

const index = new ToolIndex(CATALOG);
const names = (query: string, limit?: number) => index.search(query, limit).map((hit) => hit.name);

describe("tokenize", () => {
  it("splits camelCase, snake_case, kebab-case, dots and colons, lowercases and drops stop words", () => {
    expect(tokenize("calendar:list_eventTypes")).toEqual(["calendar", "list", "event", "typ"]);
    expect(tokenize("the JQLQuery for my-board.v2")).toEqual(["jql", "query", "board", "v2"]);
  });

  it("keeps a word's marks: a Devanagari or Thai word's vowel signs are letters of it", () => {
    expect(tokenize("फ़ाइल खोजें")).toEqual(["फ़ाइल", "खोजें"]);
    expect(tokenize("ค้นหาไฟล์")).toEqual(["ค้นหาไฟล์"]);
    // What looks the same is the same word, however its accents were typed.
    expect(tokenize("cafe\u0301")).toEqual(tokenize("café"));
  });

  it("stems plurals, -ing and -ed to the same word", () => {
    for (const [a, b] of [["events", "event"], ["replies", "reply"], ["sharing", "share"], ["shared", "share"], ["meetings", "meeting"], ["added", "add"], ["running", "run"], ["matches", "match"]]) {
      expect(stem(a!), `${a} ~ ${b}`).toBe(stem(b!));
    }
    expect(stem("status")).toBe("status");
    expect(stem("string")).toBe("string");
  });
});

describe("coverage", () => {
  const small = new ToolIndex([
    { name: "calendar:create_event", description: "Create an event on the calendar.", inputSchema: { type: "object", properties: { title: { type: "string" } } } },
    { name: "mail:send_message", description: "Send an email message.", inputSchema: { type: "object", properties: {} } },
  ]);
  const top = (query: string) => small.search(query)[0]!;

  it("is 1 for a query whose words the tool holds, less for each word it does not, least for words the catalog never uses", () => {
    expect(top("create calendar event")).toMatchObject({ name: "calendar:create_event", coverage: 1 });
    const part = top("create calendar event and send message").coverage;
    expect(part).toBeGreaterThan(0.3);
    expect(part).toBeLessThan(0.8);
    // Cognates and typos are read ("crear evento calendario" is the whole query); a word with no reading is not.
    expect(top("crear evento calendario").coverage).toBe(1);
    const foreign = top("Termin eintragen calendar").coverage;
    expect(foreign).toBeGreaterThan(0);
    expect(foreign).toBeLessThan(0.5);
    expect(small.search("Termin im Kalender eintragen")).toEqual([]);
    expect(top("calendar:create_event")).toMatchObject({ exact: true, coverage: 1 });
  });
});

describe("an app's name in camel case", () => {
  it("is read whole (DrChrono), not as its parts, whose first would read as the initials of other tools' words", () => {
    const tools = new ToolIndex([
      { name: "drchrono:list_medications", description: "List a patient's current medications.", inputSchema: { type: "object", properties: { patient: { type: "string" } } } },
      { name: "cloudflare:list_dns_records", description: "List the DNS records of a zone.", inputSchema: { type: "object", properties: { zone: { type: "string" } } } },
      { name: "cloudflare:update_dns_record", description: "Update one DNS record.", inputSchema: { type: "object", properties: { id: { type: "string" } } } },
    ]);
    expect(tools.search("DrChrono: what drugs is this person taking at the moment")[0]!.name).toBe("drchrono:list_medications");
    // A camel-case word the catalog does not hold whole is still read by its parts.
    expect(tools.search("listMedications")[0]!.name).toBe("drchrono:list_medications");
  });
});

describe("a numeronym", () => {
  it("counts the letters of the word as the catalog wrote it, not of its stem (k8s is kubernetes, stemmed kubernet)", () => {
    const tools = new ToolIndex([
      { name: "kubernetes:list_namespaces", description: "List the namespaces of a Kubernetes cluster.", inputSchema: { type: "object", properties: {} } },
      { name: "sentry:get_client_keys", description: "List a project's client keys.", inputSchema: { type: "object", properties: {} } },
      { name: "zendesk:list_tickets", description: "List tickets.", inputSchema: { type: "object", properties: {} } },
    ]);
    expect(tools.search("k8s namespaces list")[0]!.name).toBe("kubernetes:list_namespaces");
    expect(tools.search("k8s")[0]).toMatchObject({ name: "kubernetes:list_namespaces" });
  });
});

describe("exact names", () => {
  it("finds a tool by its qualified, bare and app__tool name, first and marked exact", () => {
    for (const query of ["calendar:list_event_types", "list_event_types", "calendar__list_event_types", "calendar.list_event_types", "calendar/list_event_types", "  Calendar:List_Event_Types "]) {
      const hits = index.search(query);
      expect(hits[0], query).toMatchObject({ name: "calendar:list_event_types", exact: true });
      expect(hits.slice(1).every((hit) => !hit.exact)).toBe(true);
      expect(hits).toHaveLength(5);
    }
  });

  it("returns every app's tool when a bare name is shared, by name", () => {
    const hits = index.search("read_file");
    expect(hits.filter((hit) => hit.exact).map((hit) => hit.name).sort()).toEqual(["files:read_file", "terminal:read_file"]);
    expect(hits[0]!.exact && hits[1]!.exact).toBe(true);
  });

  it("puts a qualified name written inside a sentence first", () => {
    expect(index.search("use mail:send_draft for the reply")[0]).toMatchObject({ name: "mail:send_draft", exact: true });
    expect(index.search("call `github__rerun_workflow`.")[0]).toMatchObject({ name: "github:rerun_workflow", exact: true });
  });

  it("does not treat a bare word in a sentence as a name", () => {
    expect(index.search("play some jazz").some((hit) => hit.exact)).toBe(false);
  });

  it("select: returns exactly the named tools that exist, in every name form", () => {
    const hits = index.search("select:mail:send_draft, files__delete_folder,nope:missing,empty_trash");
    expect(hits.map((hit) => hit.name).sort()).toEqual(["files:delete_folder", "files:empty_trash", "mail:send_draft"]);
    expect(hits.every((hit) => hit.exact)).toBe(true);
    expect(index.search("select:nope:missing")).toEqual([]);
  });
});

describe("ranking", () => {
  it("is deterministic, and breaks ties by name whatever the catalog order", () => {
    const twins: CatalogTool[] = ["zeta", "alpha", "mid"].map((app) => ({ name: `${app}:archive_report`, description: "Archive a report.", inputSchema: { type: "object", properties: { reportId: {} } } }));
    const forward = new ToolIndex(twins).search("archive the report");
    const backward = new ToolIndex([...twins].reverse()).search("archive the report");
    expect(forward.map((hit) => hit.name)).toEqual(["alpha:archive_report", "mid:archive_report", "zeta:archive_report"]);
    expect(backward).toEqual(forward);
    expect(new Set(forward.map((hit) => hit.score)).size).toBe(1);
    expect(index.search("put a meeting on my calendar tomorrow with Ana")).toEqual(index.search("put a meeting on my calendar tomorrow with Ana"));
  });

  it("returns best first with scores that never rise", () => {
    const hits = index.search("search my email for messages about the outage", 20);
    expect(hits).toHaveLength(20);
    for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
  });

  it("finds nothing for an empty query, a blank one, or one made of stop words", () => {
    expect(index.search("")).toEqual([]);
    expect(index.search("   \n\t")).toEqual([]);
    expect(index.search("what is the")).toEqual([]);
    expect(new ToolIndex([]).search("calendar")).toEqual([]);
  });

  it("reads only the first 512 characters of a query", () => {
    const padding = "x".repeat(SEARCH_LIMITS.maxQueryChars);
    expect(index.search(`${padding} thermostat`)).toEqual([]);
    expect(names(`${padding.slice(12)} thermostat`)).toContain("home:set_thermostat");
  });

  it("returns 5 by default and at most 20, at least 1", () => {
    expect(names("get")).toHaveLength(5);
    expect(names("get", 100)).toHaveLength(20);
    expect(names("get", 0)).toHaveLength(1);
    expect(names("get", Number.NaN)).toHaveLength(5);
  });

  it("tells near-duplicates apart by the word that differs", () => {
    expect(names("send the draft I wrote yesterday")[0]).toBe("mail:send_draft");
    expect(names("save this email as a draft, don't send it")[0]).toBe("mail:save_draft");
    expect(names("delete the folder Old Projects")[0]).toBe("files:delete_folder");
    expect(names("delete the file old-report.pdf")[0]).toBe("files:delete_file");
    expect(names("list my calendar events for today")[0]).toBe("calendar:list_events");
    expect(names("unlock the back door for the cleaner")[0]).toBe("home:unlock_door");
    expect(names("get the Jira issue PROJ-17")[0]).toBe("jira:get_issue");
  });

  it("reads a word the catalog never uses as the catalog's words it may stand for: typos, abbreviations, initialisms, numeronyms, other forms", () => {
    expect(names("calender evnt")[0]).toMatch(/^calendar:\w*event/);
    expect(names("creat calender evnt")[0]).toBe("calendar:create_event");
    expect(names("del msg")).toContain("mail:delete_message");
    expect(names("open a PR from my feature branch")[0]).toBe("github:create_pull_request");
    expect(names("DM Priya")).toContain("slack:send_direct_message");
    expect(names("deletion of the folder Old Projects")[0]).toBe("files:delete_folder");
    const ops: CatalogTool[] = [
      { name: "cluster:list_kubernetes_pods", description: "List pods in a namespace.", inputSchema: { type: "object", properties: {} } },
      { name: "cluster:list_nodes", description: "List the machines of the cluster.", inputSchema: { type: "object", properties: {} } },
    ];
    expect(new ToolIndex(ops).search("k8s pods")[0]!.name).toBe("cluster:list_kubernetes_pods");
  });

  it("reads a capitalised name as a name and an everyday word as itself: neither becomes another word", () => {
    // "Ana" is not "analytics", "late" is not "latest".
    expect(names("when are Ana and Tom both free").some((name) => name.startsWith("analytics:"))).toBe(false);
    expect(index.search("late").map((hit) => hit.name)).toEqual([]);
  });

  it("searches parameters' descriptions and allowed values: a value decides between look-alikes", () => {
    const tools: CatalogTool[] = [
      { name: "repo:set_visibility", description: "Change who can see a repository.", inputSchema: { type: "object", properties: { repo: { type: "string" }, visibility: { type: "string", enum: ["public", "private", "internal"] } } } },
      { name: "repo:archive", description: "Archive a repository so it becomes read-only.", inputSchema: { type: "object", properties: { repo: { type: "string" } } } },
      { name: "reports:export", description: "Export a report.", inputSchema: { type: "object", properties: { format: { type: "string", enum: ["csv", "pdf", "xlsx"] } } } },
      { name: "reports:share", description: "Share a report with people.", inputSchema: { type: "object", properties: { emails: { type: "array", items: { type: "string", description: "Addresses of the people to notify" } } } } },
    ];
    const small = new ToolIndex(tools);
    expect(small.search("make the repo private")[0]!.name).toBe("repo:set_visibility");
    expect(small.search("report as xlsx")[0]!.name).toBe("reports:export");
    expect(small.search("notify people about the report")[0]!.name).toBe("reports:share");
  });

  it("indexes 1,300 tools and answers a query in well under a second even on a slow machine", () => {
    const large = [0, 1, 2, 3].flatMap((copy) => CATALOG.map((tool) => ({ ...tool, name: `copy${copy}${tool.name}` })));
    const start = performance.now();
    const big = new ToolIndex(large);
    for (const { query } of QUERIES.slice(0, 50)) big.search(query);
    expect(performance.now() - start).toBeLessThan(1_000);
  });
});

describe("recall on the labelled fixture", () => {
  // Measured when written (issue 11): recall@1 69.6%, recall@5 82.9% with a synonym table chosen while reading this
  // fixture's misses. Issue 20 dropped the table (the outside corpus below showed it adding 0.7 points, 3 queries of
  // 428) for readings built from the catalog's own words: 66.9% / 79.9% here. bench:tools prints the current figures.
  it("holds the measured floor overall and per kind", () => {
    expect(CATALOG.length).toBeGreaterThanOrEqual(300);
    expect(QUERIES.length).toBeGreaterThanOrEqual(200);
    const overall = measureRecall(index, QUERIES);
    expect(overall.recallAt5).toBeGreaterThanOrEqual(0.79);
    expect(overall.recallAt1).toBeGreaterThanOrEqual(0.66);
    const kind = (k: string) => measureRecall(index, QUERIES.filter((q) => q.kind === k));
    expect(kind("exact").recallAt1).toBe(1);
    expect(kind("near_duplicate").recallAt5).toBeGreaterThanOrEqual(0.97);
    expect(kind("keyword").recallAt5).toBeGreaterThanOrEqual(0.95);
    expect(kind("paraphrase").recallAt5).toBeGreaterThanOrEqual(0.63);
  });

  it("labels only tools that exist", () => {
    const known = new Set(CATALOG.map((tool) => tool.name));
    expect(QUERIES.filter((q) => !known.has(q.expected))).toEqual([]);
    expect(known.size).toBe(CATALOG.length);
  });
});

/**
 * Recall on catalogs written by people who had not read this ranker, each by another author, none tuned on
 * (npm run bench:tools-outside). The first was measured once after the ranker was written: R@1 / R@5 57.9 / 76.6 %
 * overall, English kinds 63.6 / 81.3 % (the ranker before issue 20: 50.0 / 68.2 and 55.4 / 73.1). B and C were
 * written later and run once each, the ranker unchanged: B 60.4 / 79.6, English 64.6 / 83.2 %; C 74.9 / 90.2, English
 * 81.2 / 95.3 %. D (32 apps, 355 tools, 420 queries in 8 languages), written after, run once, the ranker unchanged:
 * 73.6 / 88.1 %, English 79.9 / 92.6 %. Then one change from D's misses (an app's name written in camel case,
 * "DrChrono", read whole, not as "Dr", the initials of "dns record"): English 65.8 / 82.9, 65.8 / 83.9, 82.1 / 95.6 and
 * 79.9 / 92.8 %; two non-English queries of the first catalog and one paraphrase of D lost their first place. The floors
 * hold these figures.
 */
describe.each([
  {
    name: "the first outside catalog",
    tools: OUTSIDE_TOOLS,
    queries: OUTSIDE_QUERIES,
    floors: { all: [0.59, 0.78], english: [0.65, 0.82], exact: [1, 1], near_duplicate: [0.75, 0.91], parameter: [0.81, 0.95], mid_task: [0.56, 0.85], paraphrase: [0.18, 0.41], typo: [0.78, 0.96], non_english: [0.2, 0.48] },
  },
  {
    name: "catalog B",
    tools: OUTSIDE_TOOLS_B,
    queries: OUTSIDE_QUERIES_B,
    floors: { all: [0.61, 0.81], english: [0.65, 0.83], exact: [1, 1], near_duplicate: [0.76, 0.95], parameter: [0.8, 0.96], mid_task: [0.57, 0.86], paraphrase: [0.24, 0.47], typo: [0.85, 0.96], non_english: [0.23, 0.55] },
  },
  {
    name: "catalog C",
    tools: OUTSIDE_TOOLS_C,
    queries: OUTSIDE_QUERIES_C,
    floors: { all: [0.75, 0.91], english: [0.82, 0.95], exact: [1, 1], near_duplicate: [0.9, 0.99], parameter: [0.93, 1], mid_task: [0.62, 0.86], paraphrase: [0.67, 0.89], typo: [0.82, 1], non_english: [0.25, 0.53] },
  },
  {
    name: "catalog D",
    tools: OUTSIDE_TOOLS_D,
    queries: OUTSIDE_QUERIES_D,
    floors: { all: [0.73, 0.88], english: [0.79, 0.92], exact: [1, 1], near_duplicate: [0.98, 1], parameter: [0.98, 1], mid_task: [0.69, 0.95], paraphrase: [0.23, 0.63], typo: [0.92, 1], non_english: [0.31, 0.61] },
  },
  {
    // Written after the ranker's last change; these are its first run's figures.
    name: "catalog E",
    tools: OUTSIDE_TOOLS_E,
    queries: OUTSIDE_QUERIES_E,
    floors: { all: [0.67, 0.86], english: [0.74, 0.89], exact: [1, 1], near_duplicate: [0.86, 1], parameter: [0.96, 0.98], mid_task: [0.5, 0.9], paraphrase: [0.25, 0.51], typo: [0.9, 1], non_english: [0.25, 0.65] },
  },
  {
    // Written after the lexical ranker's and the fusion's last change, run once: these are its figures. Fused, one
    // English query (a paraphrase) fell out of the top five: 95.2 against 95.4 %.
    name: "catalog F",
    tools: OUTSIDE_TOOLS_F,
    queries: OUTSIDE_QUERIES_F,
    floors: { all: [0.73, 0.89], english: [0.8, 0.95], exact: [1, 1], near_duplicate: [0.8, 1], parameter: [0.8, 0.98], mid_task: [0.67, 0.96], paraphrase: [0.65, 0.82], typo: [0.94, 0.96], non_english: [0.25, 0.54] },
    fusedTop5Lost: 1,
  },
  {
    // Written blind during stop 35 (46 apps, 541 tools, 549 queries in 18 languages), run once before and once after
    // that stop's one ranker change (a word keeps its marks): the same figures both times, these.
    name: "catalog G",
    tools: OUTSIDE_TOOLS_G,
    queries: OUTSIDE_QUERIES_G,
    floors: { all: [0.78, 0.92], english: [0.86, 0.97], exact: [1, 1], near_duplicate: [0.9, 1], parameter: [0.97, 1], mid_task: [0.72, 0.94], paraphrase: [0.68, 0.92], typo: [0.91, 0.96], non_english: [0.29, 0.62] },
  },
] as const)("recall on $name (written by someone who had not read this ranker; never tuned on)", ({ tools, queries, floors, ...measured }) => {
  const outside = new ToolIndex(tools);
  const figures = measureTools((query) => outside.search(query, 5).map((hit) => hit.name), queries);

  // Issue 20: the fused ranker, with the fake embedding the workerd tests bind, is never worse than the lexical one on
  // the English kinds, first place or top five. (Non-English: docs/figures.md; the fake cannot translate.)
  it("fused with the fake embedding, finds the right tool first and in its top five at least as often as the lexical ranker, in English (F: one query short at five)", () => {
    const vectors = new Map(tools.map((tool) => [tool.name, unitVector(fakeEmbedding(embeddingText(tool)))]));
    const fused = measureTools((query) => fuseRankings(outside.search(query, FUSION_DEPTH), rankByCosine(unitVector(fakeEmbedding(query)), vectors), 5).map((hit) => hit.name), queries);
    expect(rate(fused.english, 1)).toBeGreaterThanOrEqual(rate(figures.english, 1));
    const lost = ("fusedTop5Lost" in measured ? measured.fusedTop5Lost : undefined) ?? 0;
    expect(fused.english.at5).toBeGreaterThanOrEqual(figures.english.at5 - lost);
  });

  it("is a corpus the figures can name: at least 300 tools of 20 apps and 300 queries, every answer a tool of it", () => {
    expect(tools.length).toBeGreaterThanOrEqual(300);
    expect(new Set(tools.map((tool) => tool.name.split(":")[0])).size).toBeGreaterThanOrEqual(20);
    expect(queries.length).toBeGreaterThanOrEqual(300);
    const names = new Set(tools.map((tool) => tool.name));
    expect(queries.filter((q) => !names.has(q.expect))).toEqual([]);
  });

  it("holds the measured floors by kind", () => {
    for (const [kind, [at1, at5]] of Object.entries(floors)) {
      const f = figures[kind as keyof typeof floors & keyof typeof figures] as Recall;
      expect(rate(f, 1), `${kind} R@1`).toBeGreaterThanOrEqual(at1);
      expect(rate(f, 5), `${kind} R@5`).toBeGreaterThanOrEqual(at5);
    }
  });
});
