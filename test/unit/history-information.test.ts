/**
 * Issue 19: the digest ranks the user's sentences by what they carry against the conversation, not by cue words.
 * These pin the principles: entity shapes in their usual written forms, rarity against the conversation and against
 * ordinary language, updates outlasting what they update, a fact's clause outlasting its sentence, the user's share.
 */
import { describe, expect, it } from "vitest";
import { countTokens } from "../../src/core/tokens";
import { digest, USER_SHARE } from "../../src/history/digest";
import { AlikeForms, entitiesOf, fold, Information, termsOf } from "../../src/history/information";
import { dropSteps, type Unit } from "../../src/history/user-rank";
import { kindOf, userUnits } from "../../src/history/user-words";
import type { SummaryInputMessage } from "../../src/history/summary";

const at = "2026-11-01T00:00:00Z";
const said = (contents: readonly string[]): SummaryInputMessage[] => contents.map((content, k) => ({ seq: k + 1, role: "user", content, createdAt: at }));
const units = (contents: readonly string[]): Unit[] => contents.flatMap((content, k) => userUnits(content).map((u, i, all) => ({ seq: k + 1, i, of: all.length, text: u.text, kind: u.kind })));
/** The units' texts, the first given up first. */
const dropOrder = (contents: readonly string[]) => dropSteps(units(contents)).map((step) => step.map((u) => u.text).join(" + "));

describe("entity shapes", () => {
  it.each([
    ["The launch moved to June 9.", "date", "June 9"],
    ["On se voit le 9 juin 2027.", "date", "9 juin 2027"],
    ["Abgabe ist am 3. April.", "date", "3. April"],
    ["Due 2026-04-02T10:00Z sharp.", "date", "2026-04-02T10:00Z"],
    ["Ship by 3/14 if we can.", "date", "3/14"],
    ["The review is next Thursday at 4pm.", "date", "4pm"],
    ["Standup moves to 16:30.", "date", "16:30"],
    ["It lands in Q3 2027.", "date", "Q3 2027"],
    ["リリースは4月2日です。", "date", "4月2日"],
    ["The cap is $4,200 a month.", "number", "$4,200"],
    ["Uploads stop at 25 MB.", "number", "25 MB"],
    ["Uptime was 99.49% last quarter.", "number", "99.49%"],
    ["Reviews need 4 approvals now.", "number", "4 approvals"],
    ["Book 30-minute slots for spirometry.", "number", "30-minute"],
    ["Staging listens on 8443.", "number", "8443"],
    ["Route it through cache-east-2 please.", "path", "cache-east-2"],
    ["Run migrations/0017_add_ledger_index.sql first.", "path", "migrations/0017_add_ledger_index.sql"],
    ["Docs are at https://wiki.example.com/display/TEAM/Moth+Runbook today.", "path", "https://wiki.example.com/display/TEAM/Moth+Runbook"],
    ['Title it "Nothing ships on a Friday" for now.', "quote", '"Nothing ships on a Friday"'],
    ["Ask Priyanka Raman before merging.", "name", "Priyanka Raman"],
    ["Page #inc-war-room when it fires.", "path", "#inc-war-room"],
    ["Loop in @dana.w on the review.", "path", "@dana.w"],
    // An acronym or a code is a name whatever its lowercase form means ("us", "eu" and "usd" are common words of web text).
    ["The default currency for EU accounts is USD.", "name", "USD"],
    ["We launch in the US first.", "name", "US"],
    // A capitalised word inside a sentence is a name, even one ordinary text uses often.
    ["The program launches in the US and Canada together.", "name", "Canada"],
    // A name that runs into an identifier keeps its words before it.
    ["Switch the radio order to the Kenwood NX-3000 instead.", "name", "Kenwood"],
  ])("%s → %s %s", (text, shape, value) => {
    expect(entitiesOf(text)).toContainEqual({ text: value, shape, at: text.indexOf(value) });
  });

  it("finds none in ordinary requests, small numbers and time words", () => {
    for (const text of ["can you please keep the 2 more tests running until tomorrow?", "we should look at line 40 again this week", "make sure it works today, thanks", "Done: Thanks, that works."]) {
      expect(entitiesOf(text), text).toEqual([]);
      expect(["question", "other", "filler"], text).toContain(kindOf(text));
    }
  });
});

describe("canonical form", () => {
  it("folds the accents of Latin, Greek and Cyrillic letters and compatibility forms, never the marks that are letters elsewhere", () => {
    expect(fold("Café Ｆｕｌｌ ﬁle naïve Ελληνικά")).toBe("cafe full file naive ελληνικα");
    // Arabic's and Hebrew's vowel points are optional: the word is the same without them.
    expect(fold("كَتَبَ")).toBe(fold("كتب"));
    expect(fold("שָׁלוֹם")).toBe(fold("שלום"));
    // A long run of marks is read once (a lookbehind over the run would be quadratic: 64,000 marks took 46 s).
    expect(fold(`a${"\u0301".repeat(64_000)}`)).toBe("a");
    expect(fold(`क${"\u093f".repeat(10)}`)).toBe(`क${"\u093f".repeat(10)}`);
    // Kana's voicing makes another word (ガス gas, カス dregs); Devanagari's and Thai's vowel signs are the word's vowels.
    expect(fold("ガス")).not.toBe(fold("カス"));
    for (const word of ["ガス", "किताब", "ภาษาไทย", "한국어"]) expect(fold(word)).toBe(word);
    // A word keeps its vowel signs: किताब (book) is one word, not its consonants.
    expect(termsOf("किताब").words).toEqual(["किताब"]);
  });
});

describe("information", () => {
  it("weighs a sentence of rare terms and entities over a longer one of request and time words", () => {
    const request = "Can you please make sure we keep the tests running until tomorrow, and let me know this week?";
    const fact = "The ledger index lives in migrations/0017_add_ledger_index.sql.";
    const info = new Information([termsOf(request), termsOf(fact)]);
    expect(info.of(termsOf(fact)) / countTokens(fact)).toBeGreaterThan(1.5 * (info.of(termsOf(request)) / countTokens(request)));
  });

  it("weighs a word the user keeps saying less than the same word said once", () => {
    const repeated = Array.from({ length: 20 }, (_, k) => `The heron dashboard looks fine on run ${k}.`);
    const info = new Information([...repeated, "Check the osprey."].map(termsOf));
    expect(info.wordWeight("heron")).toBeLessThan(info.wordWeight("osprey") / 2);
  });
});

describe("the drop order", () => {
  it("gives up requests, chat and time words before the sentences with a path, an amount, a name or a date", () => {
    const filler = ["Can you check the logs again please?", "We should keep an eye on it today.", "Please keep going, thanks!", "Could you run the tests again tomorrow?", "Let me know when it's done this week."];
    const facts = ["The export goes to out/kestrel_final_v2.csv.", "The Kestrel budget is 4,200 euros.", "Ingrid Valsdóttir signs off on Kestrel.", "Kestrel ships on March 3rd."];
    const order = dropOrder([...filler, ...facts]);
    const firstFact = Math.min(...facts.map((f) => order.indexOf(f)));
    for (const f of filler) expect(order.indexOf(f), f).toBeLessThan(firstFact);
  });

  it("never gives up a correction before what it corrects, however it is phrased", () => {
    const order = dropOrder(["Stonechat runs on Vue.", "Ok.", "Stonechat runs on Postgres from now on.", "The Moth staging port is 8080.", "I had the Moth port wrong, it's 8443."]);
    expect(order.indexOf("Stonechat runs on Vue.")).toBeLessThan(order.indexOf("Stonechat runs on Postgres from now on."));
    expect(order.indexOf("The Moth staging port is 8080.")).toBeLessThan(order.indexOf("I had the Moth port wrong, it's 8443."));
  });

  it("gives up what was updated before every sentence read as its update, not only the latest, so a true correction outlasts it", () => {
    // "Thursday" reads as a later update of the freeze, and "Monday" as an update of the correction (both share a word
    // and change a date): the original must still go before the correction.
    const original = "The CareFlow cutover freeze for the Harbourside EPR migration starts at 5pm on the Friday before go-live, says Osei Mensah.";
    const correction = "Before I forget: correction on the cutover freeze, it starts at 2pm on the Friday.";
    const order = dropOrder([original, correction, "I need the cutover freeze notes for the ops meeting on Thursday covering staffing, Priya's rota and CareFlow.", "Before I forget: Monday."]);
    expect(order.indexOf(original)).toBeLessThan(order.indexOf(correction));
  });

  it("reads the user's words around a pasted log, not its lines, as theirs: three or more lines a machine stamped", () => {
    const message = "The fire panel printed this overnight, should Hanna call someone?\n23:52 FAULT LOOP 2 DEVICE 034 NO RESPONSE\n00:07 FAULT CLEARED LOOP 2 DEVICE 034\n03:40 FAULT LOOP 2 DEVICE 035 NO RESPONSE\nThe annual inspection is due on 14 March.";
    expect(userUnits(message).map((u) => u.kind === "pasted")).toEqual([false, true, true, true, false]);
    // One or two such lines are the user's own, and so is an agenda in their words, however long.
    expect(userUnits("Tomorrow:\n08:10 first bus to Höhenberg\n08:40 ticket office opens").filter((u) => u.kind === "pasted")).toEqual([]);
    expect(userUnits("Monday:\n09:00 standup with Dana\n10:30 review the Moth budget\n13:00 lunch with the Osprey team").filter((u) => u.kind === "pasted")).toEqual([]);
    // A log to the second is a machine's, whatever its case; so is one stamped in ISO 8601, its date running into its "T".
    expect(userUnits("02:11:40 alm 114 low water pressure\n02:11:41 gun 07 trip\n02:13:05 alm 114 cleared").every((u) => u.kind === "pasted")).toBe(true);
    expect(userUnits("[2024-02-09T19:10:00Z] ERROR publish: image too big\n[2024-02-09T19:10:04Z] WARN retry 1/3\n[2024-02-09T19:10:34Z] ERROR publish failed").every((u) => u.kind === "pasted")).toBe(true);
  });

  it("reads labelled lines as the user's own: a prompt, notes, a plan are written so as often as a pasted form", () => {
    for (const own of [
      "Task: draft the board summary\nContext: Kenji reads every line\nConstraints: one page, no jargon",
      "Note: the pour is moved to Tuesday\nReminder: book the pump for 7am\nAlso: tell Sam the crane is late",
      "Monday: I drive them to school\nTuesday: you take them\nWednesday: Gran has them",
    ]) expect(userUnits(own).some((u) => u.kind === "pasted"), own).toBe(false);
  });

  it("reads a table's rows as pasted: cells set apart by pipes, tabs or columns of spaces", () => {
    const message = "Harold pasted this, no context:\nround              copies  returns\nSedgebury           2617  32.6%\nHolt Cross loop     3648  18.1%\nIs that this week's?";
    expect(userUnits(message).map((u) => u.kind === "pasted")).toEqual([false, true, true, true, false]);
    expect(userUnits("p7 | bin strike ballot | Hallow End Care Home half").every((u) => u.kind === "pasted")).toBe(true);
    expect(userUnits("| Dana | launch |\n| Mon | 3 |").every((u) => u.kind === "pasted")).toBe(true);
    expect(userUnits("ticket\towner\tdue\nLK-12\tDana\tFriday").every((u) => u.kind === "pasted")).toBe(true);
    // Prose: a lone pipe, pipes in a sentence, two spaces after each full stop.
    for (const prose of [
      "The Stonechat budget is £4,000 | approved.",
      "Pick one: red door | green door | blue door",
      "Run cat app.log | grep ERROR | wc -l and note the deadline is Friday.",
      "We moved the launch to June 12.  The budget is 40k.  Dana owns it.",
    ]) expect(userUnits(prose).some((u) => u.kind === "pasted"), prose).toBe(false);
  });

  it("reads someone else's text set in quotes as pasted, sentence by sentence: mail quoting, or a long quotation", () => {
    const thread = "Thread from a reader, newest first:\n> Nell: Still no reply. I'll be contacting IPSO by Monday.\nCan you find the article?";
    // Two quoted lines or more are someone's mail, punctuated or not.
    expect(userUnits("Tom sent:\n> Hi Dana\n> The invoice is attached\n> Thanks, Tom\nIs it right?").map((u) => u.kind === "pasted")).toEqual([false, true, true, true, false]);
    expect(userUnits(thread).map((u) => [u.text, u.kind === "pasted"])).toEqual([
      ["Thread from a reader, newest first:", false],
      ["Nell: Still no reply.", true],
      ["I'll be contacting IPSO by Monday.", true],
      ["Can you find the article?", false],
    ]);
    const pitch = 'Pitch from Nell:\n"I have followed the new GP surgery for months and have two residents on record. I could do 950 words by Thursday the 12th."\nWorth it?';
    expect(userUnits(pitch).filter((u) => u.kind === "pasted").map((u) => u.text)).toEqual(["I have followed the new GP surgery for months and have two residents on record.", "I could do 950 words by Thursday the 12th."]);
    const translate = 'Can you put this into Spanish for Lucía? "Our coach will drop the musicians at the stage door at 20:20. Is there a piano tuner on the day?"';
    expect(userUnits(translate).map((u) => u.kind === "pasted")).toEqual([false, true, true]);
    // The user's own: a short quotation, a quote inside their words, a comparison, one sentence set in a mail quote to
    // keep its wording.
    for (const own of [
      "> The map is not the territory (but it helps).\nthat's the wording legal approved, keep it",
      "> The map is not the territory (but it helps).\n>\nthat's the wording legal approved, keep it",
      '"Fast. Simple. Yours." is the tagline.',
      '"Fast. Simple. Yours."',
      '"Dana owns the launch." Actually Priya owns it now, so update the doc titled "Launch plan".',
      'The headline has to be exactly "Ship faster. Sleep more." for Moonrise.',
      "> 200 errors since noon. Roll back to 4.2 now.",
    ]) expect(userUnits(own).some((u) => u.kind === "pasted"), own).toBe(false);
  });

  it("reads a chat transcript's lines, a time and who said it, three or more in a row, as pasted", () => {
    const chat = "What did we agree?\n[11:24] Greta: Has anyone seen my spare bow?\n[11:25] Gareth: Not on stage\n[11:36] Callum: There's one in dressing room 14";
    expect(userUnits(chat).map((u) => u.kind === "pasted")).toEqual([false, true, true, true]);
    expect(userUnits("Monday:\n09:00 standup with Dana\n10:30 review the Moth budget\n13:00 lunch with the Osprey team").some((u) => u.kind === "pasted")).toBe(false);
  });

  it("reads a value updated in the same words, however often, as updates: the latest goes last", () => {
    const rates = ["The agency HCA rate is £24.10 an hour.", "The agency HCA rate is £25.35 an hour.", "The agency HCA rate is £26 an hour."];
    const order = dropOrder(rates);
    expect(order.indexOf(rates[0]!)).toBeLessThan(order.indexOf(rates[1]!));
    expect(order.indexOf(rates[1]!)).toBeLessThan(order.indexOf(rates[2]!));
  });

  it("reads a form three or more sentences share, two or more values changed, as a routine: the next of them corrects nothing", () => {
    const weekly = ["Web traffic down 23.5% week on week; Bernie to look at the homepage order.", "Web traffic down 15.6% week on week; Ruth to look at the homepage order.", "Web traffic down 17.0% week on week; Fiona to look at the homepage order."];
    expect(dropSteps(units(weekly)).flat().map((u) => u.kind)).not.toContain("correction");
    const chases = ["Chase the council on FOI-2937; it's 10 working days overdue.", "Chase the council on FOI-4198; it's 23 working days overdue.", "Chase the council on FOI-1970; it's 24 working days overdue."];
    expect(dropSteps(units(chases)).flat().map((u) => u.kind)).not.toContain("correction");
    // Two sentences of one form are a statement and its correction.
    const pair = dropSteps(units(["The Dunmere regatta is on Saturday 12 July.", "The Dunmere regatta is on Sunday 13 July."]));
    expect(pair.flat().find((u) => u.text.includes("Sunday"))!.kind).toBe("correction");
  });

  it("reads a new bare number of a shared subject, and a new channel, as an update", () => {
    const order = dropOrder(["The Android minimum SDK is API level 24.", "Android minimum SDK needs to be API level 26, I forgot the notification changes.", "Incidents go to #ops-alerts.", "Oops, incidents go to #inc-war-room now."]);
    expect(order.indexOf("The Android minimum SDK is API level 24.")).toBeLessThan(order.indexOf("Android minimum SDK needs to be API level 26, I forgot the notification changes."));
    expect(order.indexOf("Incidents go to #ops-alerts.")).toBeLessThan(order.indexOf("Oops, incidents go to #inc-war-room now."));
  });

  it("reads a number as updated only where the same place holds another: adding a value is no update", () => {
    const steps = dropSteps(units(["Locker 3 is for the Hartwell badges.", "Locker 3 is shut till 5."]));
    expect(steps.flat().map((u) => u.kind)).not.toContain("correction");
    const updated = dropSteps(units(["Locker 3 holds the Hartwell badges.", "Sorry, locker 4 holds the Hartwell badges."]));
    expect(updated.flat().find((u) => u.text.includes("locker 4"))!.kind).toBe("correction");
  });

  it("reads two subject words that no other sentence holds together as a subject, each said more often", () => {
    const order = dropOrder([
      "The SMS reminder provider charges 3.2p per message.",
      "SMS volumes doubled over Easter.",
      "Reminder letters go out by post for the over-80s.",
      "The SMS reminder price is actually 2.9p per message after the discount.",
    ]);
    expect(order.indexOf("The SMS reminder provider charges 3.2p per message.")).toBeLessThan(order.indexOf("The SMS reminder price is actually 2.9p per message after the discount."));
  });

  it("reads a new number in the same place of the same words as an update, though a third sentence shares the subject", () => {
    const old = "And before I forget: Agency HCA rate is £24.10 an hour.";
    const update = "The agency HCA rate has gone up to £25.35 an hour from this month.";
    const order = dropOrder(["The HCA rota is owned by Bettina Grau from now on.", "HCA cover is short on Mondays.", old, "Ok.", update]);
    expect(order.indexOf(old)).toBeLessThan(order.indexOf(update));
    // The same place of the same words with a new value, and no other value standing there: "the HCA rota" has none.
    expect(dropSteps(units([old, "The HCA rota is owned by Bettina Grau.", update])).flat().find((u) => u.text === update)!.kind).toBe("correction");
  });

  it("reads a number written onto its unit as a number, not a path", () => {
    expect(termsOf("The SMS provider charges 3.2p per message.").entities.some((e) => e.startsWith("\u00a7path"))).toBe(false);
    expect(termsOf("The SMS provider charges 3.2p per message.").numbers).toEqual(["3.2p"]);
    expect(termsOf("Disk quota is 2.5GB").form).toBe("disk quota is #");
    expect(termsOf("Use cache-east-2 and v2.4").entities).toEqual(["\u00a7path:cache-east-2", "\u00a7path:v2.4"]);
    // A mark the user typed is a word of theirs, never taken for one of the canonical form's.
    expect(termsOf("I typed §number here and £5 there")).toMatchObject({ form: "i typed number here and # there", numbers: ["£5"] });
  });

  it("gives up a sentence whose form the user keeps writing (a routine request) before one said once, values alike", () => {
    const routine = ["LK-1042", "LK-1187", "LK-1203", "LK-1266", "LK-1311", "LK-1350"].map((ticket) => `I'll get to ${ticket} by EOD.`);
    const fact = "We decided the onboarding checklist is mandatory for new admins.";
    const order = dropOrder([...routine, fact]);
    for (const r of routine) expect(order.indexOf(r), r).toBeLessThan(order.indexOf(fact));
    expect(new AlikeForms([...routine, fact].map(termsOf)).counts).toEqual([...routine.map(() => routine.length), 1]);
  });

  it("reads a template with a word slot as a routine, as much as a form repeated exactly", () => {
    const routine = [
      ["125", "security", "£39,595", "£37,210"],
      ["23", "traffic marshals", "£44,450", "£43,820"],
      ["61", "hoarding repairs", "£12,905", "£13,300"],
      ["88", "welfare cabins", "£8,210", "£8,045"],
    ].map(([line, item, committed, forecast]) => `Update the cost tracker: line ${line}, ${item}, committed ${committed}, forecast ${forecast}.`);
    const facts = ["Our preliminaries are running at £84,300 a month.", "The pour register online is https://pours.example.co.uk/hl/register."];
    expect(new AlikeForms([...routine, ...facts].map(termsOf)).counts).toEqual([4, 4, 4, 4, 1, 1]);
    const order = dropOrder([...routine, ...facts]);
    for (const r of routine.slice(1)) for (const fact of facts) expect(order.indexOf(r), r).toBeLessThan(order.indexOf(fact));
    // Facts that share a few words of their form ("… is …") are not a routine: each states its own subject.
    const stated = ["The CQC visit is booked for Tuesday 18 November at 09:30.", "The robotic programme go-live is Monday 1 December.", "The deadline for winter bids is noon on Friday 31 October."];
    expect(new AlikeForms(stated.map(termsOf)).counts).toEqual([1, 1, 1]);
  });

  it("compares each distinct form once, and meets a bounded number of the forms that share its pairs", () => {
    const ordinals = Array.from({ length: 30_000 }, (_, k) => termsOf(`${k + 1}.`));
    expect(new Set(new AlikeForms(ordinals).counts)).toEqual(new Set([30_000]));
    // Thousands of forms sharing a pair every one of them holds: each meets a bounded number, and none is alike, as
    // that pair tells nothing.
    const letters = (k: number) => [...k.toString(26)].map((c) => String.fromCharCode(97 + parseInt(c, 26))).join("");
    const crowded = Array.from({ length: 5_000 }, (_, k) => termsOf(`zq${letters(k)} beta gamma`));
    expect(new Set(new AlikeForms(crowded).counts)).toEqual(new Set([1]));
  });

  it("does not read short statements that share only their grammar as a routine, in any script", () => {
    const chat = ["thanks, that reads better now", "ok sounds good, let's keep going with the slides", "can you tidy up the intro paragraph a bit", "lovely, cheers"];
    for (const facts of [
      ["The venue is at Hartley Hall.", "The dinner is at Rosa's.", "The hotel is at Kings Cross."],
      ["Kickoff is March 3.", "Deadline is March 10.", "Launch is March 24."],
      ["予算は四千万円です。", "担当は田中さんです。", "会場は本社の大会議室に決めました。"],
    ]) {
      const order = dropOrder([...chat, ...facts]);
      for (const fact of facts) expect(order.indexOf(fact), fact).toBeGreaterThanOrEqual(chat.length);
      expect(new AlikeForms([...chat, ...facts].map(termsOf)).counts.slice(chat.length), facts[0]).toEqual([1, 1, 1]);
    }
  });

  it("still reads an update of a value in the same words as an update when alike sentences surround it", () => {
    const chat = ["thanks, that reads better now", "ok sounds good, let's keep going with the slides", "can you tidy up the intro paragraph a bit", "lovely, cheers"];
    const chain = ["The HCA rate is £24.10 an hour.", "The HCA rate is £25.35 an hour.", "The HCA rate is £26 an hour, confirmed by Bettina."];
    const steps = dropSteps(units([...chat, ...chain])).flat();
    expect(steps.find((u) => u.text === chain[2])!.kind).toBe("correction");
    const order = steps.map((u) => u.text);
    expect(order.indexOf(chain[1]!)).toBeLessThan(order.indexOf(chain[2]!));
    const regatta = ["The Dunmere regatta is on Saturday 12 July at Hartley Hall.", "Change of plan: the Dunmere regatta is on Sunday 13 July at Rosa's.", "The Dunmere prize-giving is on Monday 14 July at Hartley Hall."];
    const after = dropSteps(units([...chat, ...regatta])).flat().map((u) => u.text);
    expect(after.indexOf(regatta[0]!)).toBeLessThan(after.indexOf(regatta[1]!));
  });

  it("keeps a correction that names no subject together with the sentence before it", () => {
    const steps = dropSteps(units(["The Heron release.", "It goes out Thursday, not Tuesday."]));
    expect(steps.map((s) => s.map((u) => u.text))).toContainEqual(["It goes out Thursday, not Tuesday.", "The Heron release."]);
  });

  it("gives up the clauses of a long sentence around its fact before the fact", () => {
    const long = "I was going through the notes from the meeting this morning with the whole team, and after a lot of back and forth about it, the Osprey launch date is May 14, which everyone seemed happy enough with in the end.";
    const parts = userUnits(long).map((u) => u.text);
    expect(parts.length).toBeGreaterThan(1);
    const fact = parts.find((p) => p.includes("May 14"))!;
    const order = dropOrder([long]);
    for (const p of parts) if (p !== fact) expect(order.indexOf(p), p).toBeLessThan(order.indexOf(fact));
    const draft = digest({ previous: null, messages: said([long]), maxTokens: countTokens(fact) + 40 });
    expect(draft.text).toContain("the Osprey launch date is May 14");
  });
});

describe("the user's share", () => {
  it("keeps the user's words in at least their share of the budget when files and tools would crowd them out", () => {
    const messages: SummaryInputMessage[] = Array.from({ length: 60 }, (_, k): SummaryInputMessage[] => [
      { seq: 2 * k + 1, role: "user", content: `Project Codename${k} ships with build ${1000 + k} on day ${k + 1}.`, createdAt: at },
      { seq: 2 * k + 2, role: "assistant", content: "", toolCalls: [{ name: "read_file", arguments: JSON.stringify({ path: `src/module${k}/file${k}.ts` }) }], createdAt: at },
    ]).flat();
    const maxTokens = 600;
    const draft = digest({ previous: null, messages, maxTokens });
    expect(countTokens(draft.text)).toBeLessThanOrEqual(maxTokens);
    const lines = draft.text.split("\n");
    const userTokens = countTokens(lines.filter((l) => l.startsWith("- [#")).join("\n"));
    expect(userTokens).toBeGreaterThanOrEqual(USER_SHARE * maxTokens - 60);
    // The files share what is left: some are kept, the rest counted.
    expect(draft.text).toContain("Files, artifacts and tools:");
    expect(draft.loss.some((l) => /file and tool lines? dropped/.test(l))).toBe(true);
  });
});
