import { describe, expect, it } from "vitest";
import { KeptAnswers } from "../../src/hub/kept-answers";

describe("the hub's kept provider answers", () => {
  it("keeps an answer per provider and conversation, a null one too, and forgets a provider or an app", () => {
    const kept = new KeptAnswers();
    kept.keep("desk:doc", "c1", kept.now(), { content: "a" });
    kept.keep("desk:doc", "c2", kept.now(), null);
    kept.keep("desk:clock", "c1", kept.now(), { content: "9" });
    kept.keep("mail:inbox", "c1", kept.now(), { content: "3" });
    expect([kept.get("desk:doc", "c1"), kept.get("desk:doc", "c2"), kept.get("desk:doc", "c3")]).toEqual([{ content: "a" }, null, undefined]);
    kept.forget("desk:doc");
    expect([kept.get("desk:doc", "c1"), kept.get("desk:doc", "c2"), kept.get("desk:clock", "c1")]).toEqual([undefined, undefined, { content: "9" }]);
    kept.forgetApp("desk");
    expect([kept.get("desk:clock", "c1"), kept.get("mail:inbox", "c1")]).toEqual([undefined, { content: "3" }]);
  });

  it("does not keep an answer pulled before something was forgotten: it may predate the change", () => {
    const kept = new KeptAnswers();
    const started = kept.now();
    kept.forget("desk:doc");
    kept.keep("desk:doc", "c1", started, { content: "old" });
    expect(kept.get("desk:doc", "c1")).toBeUndefined();
    kept.keep("desk:doc", "c1", kept.now(), { content: "new" });
    expect(kept.get("desk:doc", "c1")).toEqual({ content: "new" });
  });

  it("holds at most its limits, the oldest going first, and never an answer larger than all of them", () => {
    const kept = new KeptAnswers({ entries: 3, chars: 100 });
    for (const c of ["c1", "c2", "c3", "c4"]) kept.keep("desk:doc", c, kept.now(), { content: c });
    expect(kept.size).toBe(3);
    expect(kept.get("desk:doc", "c1")).toBeUndefined();
    kept.keep("desk:doc", "big", kept.now(), { content: "x".repeat(200) });
    expect(kept.get("desk:doc", "big")).toBeUndefined();
    kept.keep("desk:doc", "half", kept.now(), { content: "y".repeat(60) });
    expect(kept.get("desk:doc", "half")).toBeDefined();
    expect(kept.size).toBeLessThanOrEqual(2);
  });
});
