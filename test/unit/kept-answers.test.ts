import { describe, expect, it } from "vitest";
import { KeptAnswers } from "../../src/hub/kept-answers";

describe("the hub's kept provider answers", () => {
  it("keeps an answer per provider and conversation, a null one too, and forgets a provider, an app or a conversation", () => {
    const kept = new KeptAnswers();
    const keep = (ref: string, conversation: string, value: unknown) => kept.keep(ref, conversation, kept.now(ref), value);
    keep("desk:doc", "c1", { content: "a" });
    keep("desk:doc", "c2", null);
    keep("desk:clock", "c1", { content: "9" });
    keep("mail:inbox", "c1", { content: "3" });
    keep("mail:inbox", "c2", { content: "4" });
    expect([kept.get("desk:doc", "c1"), kept.get("desk:doc", "c2"), kept.get("desk:doc", "c3")]).toEqual([{ content: "a" }, null, undefined]);
    kept.forget("desk:doc");
    expect([kept.get("desk:doc", "c1"), kept.get("desk:doc", "c2"), kept.get("desk:clock", "c1")]).toEqual([undefined, undefined, { content: "9" }]);
    kept.forgetApp("desk");
    expect([kept.get("desk:clock", "c1"), kept.get("mail:inbox", "c1")]).toEqual([undefined, { content: "3" }]);
    kept.forgetConversation("c1");
    expect([kept.get("mail:inbox", "c1"), kept.get("mail:inbox", "c2")]).toEqual([undefined, { content: "4" }]);
  });

  it("does not keep an answer pulled before its provider or app was forgotten, and keeps another's", () => {
    const kept = new KeptAnswers();
    const [doc, clock, inbox] = [kept.now("desk:doc"), kept.now("desk:clock"), kept.now("mail:inbox")];
    kept.forget("desk:doc");
    kept.keep("desk:doc", "c1", doc, { content: "old" });
    kept.keep("desk:clock", "c1", clock, { content: "9" });
    expect([kept.get("desk:doc", "c1"), kept.get("desk:clock", "c1")]).toEqual([undefined, { content: "9" }]);
    kept.forgetApp("desk");
    kept.keep("desk:clock", "c2", clock, { content: "9" });
    kept.keep("mail:inbox", "c1", inbox, { content: "3" });
    expect([kept.get("desk:clock", "c2"), kept.get("mail:inbox", "c1")]).toEqual([undefined, { content: "3" }]);
    kept.keep("desk:doc", "c1", kept.now("desk:doc"), { content: "new" });
    expect(kept.get("desk:doc", "c1")).toEqual({ content: "new" });
  });

  it("holds at most its limits, the oldest going first, and never an answer larger than all of them", () => {
    const kept = new KeptAnswers({ entries: 3, chars: 100 });
    for (const c of ["c1", "c2", "c3", "c4"]) kept.keep("desk:doc", c, kept.now("desk:doc"), { content: c });
    expect(kept.size).toBe(3);
    expect(kept.get("desk:doc", "c1")).toBeUndefined();
    kept.keep("desk:doc", "big", kept.now("desk:doc"), { content: "x".repeat(200) });
    expect(kept.get("desk:doc", "big")).toBeUndefined();
    kept.keep("desk:doc", "half", kept.now("desk:doc"), { content: "y".repeat(60) });
    expect(kept.get("desk:doc", "half")).toBeDefined();
    expect(kept.size).toBeLessThanOrEqual(2);
  });
});
