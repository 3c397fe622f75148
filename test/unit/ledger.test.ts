import { describe, expect, it } from "vitest";
import { diffLedger, type LedgerEntry, type Observation } from "../../src/core/ledger";

const entry = (key: string, version: string, kind: LedgerEntry["kind"] = "context"): LedgerEntry => ({ key, kind, title: key, version });
const present = (key: string, version: string, kind: LedgerEntry["kind"] = "context"): Observation => ({ key, kind, status: "present", title: key, version, content: `${key}@${version}` });

describe("diffLedger", () => {
  it("says first, updated, unchanged and removed", () => {
    const diff = diffLedger([entry("a", "1"), entry("b", "1"), entry("gone", "1")], [present("a", "1"), present("b", "2"), present("new", "1")]);
    expect(diff.changes.map((c) => [c.key, c.change])).toEqual([
      ["b", "updated"],
      ["new", "first"],
      ["gone", "removed"],
    ]);
    expect(diff.unchanged).toEqual(["a"]);
  });

  it("neither injects nor removes a context that could not be read", () => {
    const diff = diffLedger([entry("a", "1")], [{ key: "a", kind: "context", status: "missing", reason: "timeout", detail: "late" }]);
    expect(diff.changes).toEqual([]);
    expect(diff.missing.map((m) => m.key)).toEqual(["a"]);
  });

  it("removes a shown context whose provider now answers null, and stays silent for one never shown", () => {
    const diff = diffLedger([entry("a", "1")], [{ key: "a", kind: "context", status: "empty" }, { key: "b", kind: "context", status: "empty" }]);
    expect(diff.changes).toEqual([{ key: "a", kind: "context", change: "removed", reason: "empty" }]);
    expect(diff.empty).toEqual(["b"]);
  });

  it("keeps contexts and resources with the same key apart", () => {
    const diff = diffLedger([entry("notes:sel", "1", "context")], [present("notes:sel", "1", "context"), present("notes:sel", "9", "resource")]);
    expect(diff.changes.map((c) => [c.kind, c.change])).toEqual([["resource", "first"]]);
    expect(diff.unchanged).toEqual(["notes:sel"]);
  });

  it("counts a key observed twice once", () => {
    expect(diffLedger([], [present("a", "1"), present("a", "2")]).changes).toHaveLength(1);
  });
});
