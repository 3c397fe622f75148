import { describe, expect, it } from "vitest";
import { ageLabel, daysBetween, withAges } from "../../src/core/ages";

const at = (iso: string) => new Date(iso);

describe("message ages", () => {
  it("counts calendar days, so every label changes together at midnight (UTC)", () => {
    expect(daysBetween("2026-11-22T23:59:00Z", at("2026-11-23T00:01:00Z"))).toBe(1);
    expect(daysBetween("2026-11-23T00:01:00Z", at("2026-11-23T23:59:00Z"))).toBe(0);
    expect([0, 1, 2, 13, 14, 59, 60, 729, 800].map(ageLabel)).toEqual([
      null, "yesterday", "2 days ago", "13 days ago", "2 weeks ago", "8 weeks ago", "2 months ago", "24 months ago", "2 years ago",
    ]);
  });

  it("heads earlier days' user and assistant text, and leaves today's messages, tool output and calls alone", () => {
    const call = { id: "c1", type: "function" as const, function: { name: "f", arguments: "{}" } };
    const history = [
      { message: { role: "user" as const, content: "plan the trip" }, createdAt: "2026-11-20T10:00:00Z" },
      { message: { role: "assistant" as const, content: null, tool_calls: [call] }, createdAt: "2026-11-20T10:00:01Z" },
      { message: { role: "tool" as const, tool_call_id: "c1", content: "3 hits" }, createdAt: "2026-11-20T10:00:02Z" },
      { message: { role: "assistant" as const, content: "Here is a plan." }, createdAt: "2026-11-22T18:00:00Z" },
      { message: { role: "user" as const, content: "thanks" }, createdAt: "2026-11-23T08:00:00Z" },
    ];
    const view = withAges(history, at("2026-11-23T09:00:00Z"));
    expect(view).toEqual([
      { role: "user", content: "[written 3 days ago]\nplan the trip" },
      history[1]!.message,
      history[2]!.message,
      { role: "assistant", content: "[written yesterday]\nHere is a plan." },
      { role: "user", content: "thanks" },
    ]);
    // Later the same day the view is byte-identical: the cached prefix holds until midnight.
    expect(JSON.stringify(withAges(history, at("2026-11-23T23:59:59Z")))).toBe(JSON.stringify(view));
  });
});
