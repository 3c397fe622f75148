import { describe, expect, it } from "vitest";
import { AgentDefinition, Guard } from "../../src/protocol/methods";
import { evaluateGuard, GUARD_VALUE_CHARS, patternProblem, type GuardConfig, type GuardedCall } from "../../src/tools/guard";

const call = (over: Partial<GuardedCall> = {}): GuardedCall => ({ name: "calendar__delete_event", qualified: "calendar:delete_event", arguments: {}, ...over });
const rules = (...r: GuardConfig["rules"]): GuardConfig => ({ rules: r });

describe("the rule guard", () => {
  it("allows when no rule matches, and with no guard at all", () => {
    expect(evaluateGuard(undefined, call())).toEqual({ verdict: "allow", rule: null });
    expect(evaluateGuard(rules({ tool: "mail:*", verdict: "deny", reason: "no mail" }), call())).toEqual({ verdict: "allow", rule: null });
  });

  it("matches globs on the model-facing or the qualified name", () => {
    for (const tool of ["calendar:delete_*", "calendar__delete_*", "*", "*delete*", "calendar:delete_even?"]) {
      expect(evaluateGuard(rules({ tool, verdict: "deny", reason: "r" }), call()).verdict, tool).toBe("deny");
    }
    for (const tool of ["calendar:create_*", "delete_*", "calendar:delete_even", "calendar.delete_*"]) {
      expect(evaluateGuard(rules({ tool, verdict: "deny", reason: "r" }), call()).verdict, tool).toBe("allow");
    }
    // The runtime's own tools by their name.
    expect(evaluateGuard(rules({ tool: "read_*", verdict: "deny", reason: "r" }), call({ name: "read_context", qualified: "read_context" })).verdict).toBe("deny");
  });

  it("matches annotations; an undeclared hint is false", () => {
    const destructive = rules({ annotations: { destructiveHint: true }, verdict: "deny", reason: "destructive" });
    expect(evaluateGuard(destructive, call({ annotations: { destructiveHint: true } }))).toEqual({ verdict: "deny", rule: 0, reason: "destructive" });
    expect(evaluateGuard(destructive, call({ annotations: { readOnlyHint: true } })).verdict).toBe("allow");
    expect(evaluateGuard(destructive, call()).verdict).toBe("allow");
    const notReadOnly = rules({ annotations: { readOnlyHint: false }, verdict: "deny", reason: "writes" });
    expect(evaluateGuard(notReadOnly, call()).verdict).toBe("deny");
    expect(evaluateGuard(notReadOnly, call({ annotations: { readOnlyHint: true } })).verdict).toBe("allow");
  });

  it("matches argument patterns at a JSON Pointer: strings as they are, other values as JSON; all must match", () => {
    const prod = rules({ arguments: [{ path: "/target/env", pattern: "^prod" }], verdict: "deny", reason: "not production" });
    expect(evaluateGuard(prod, call({ arguments: { target: { env: "production" } } })).verdict).toBe("deny");
    expect(evaluateGuard(prod, call({ arguments: { target: { env: "staging" } } })).verdict).toBe("allow");
    expect(evaluateGuard(prod, call({ arguments: {} })).verdict).toBe("allow");
    expect(evaluateGuard(prod, call({ arguments: null })).verdict).toBe("allow");
    const many = rules({ arguments: [{ path: "/ids/1", pattern: "^\\d+$" }, { path: "/force", pattern: "true" }], verdict: "deny", reason: "r" });
    expect(evaluateGuard(many, call({ arguments: { ids: ["a", 42], force: true } })).verdict).toBe("deny");
    expect(evaluateGuard(many, call({ arguments: { ids: ["a", 42], force: false } })).verdict).toBe("allow");
  });

  it("gives the first matching rule's verdict", () => {
    const config = rules(
      { tool: "calendar:delete_*", arguments: [{ path: "/id", pattern: "^draft-" }], verdict: "allow", reason: "drafts may go" },
      { tool: "calendar:delete_*", verdict: "deny", reason: "deleting needs the user" },
      { tool: "*", verdict: "allow", reason: "the rest" },
    );
    expect(evaluateGuard(config, call({ arguments: { id: "draft-1" } }))).toEqual({ verdict: "allow", rule: 0 });
    expect(evaluateGuard(config, call({ arguments: { id: "e1" } }))).toEqual({ verdict: "deny", rule: 1, reason: "deleting needs the user" });
    expect(evaluateGuard(config, call({ name: "calendar__list_events", qualified: "calendar:list_events" }))).toEqual({ verdict: "allow", rule: 2 });
  });

  it("refuses a bad or dangerous pattern at registration", () => {
    const agent = (pattern: string) => AgentDefinition.safeParse({ agentId: "a", name: "A", systemPrompt: "x", guard: { rules: [{ arguments: [{ path: "/x", pattern }], verdict: "deny", reason: "r" }] } });
    expect(agent("^rm\\s+-rf").success).toBe(true);
    expect(agent(".*prod.*").success).toBe(true);
    for (const bad of ["(unclosed", "(a+)+$", "(a|aa)*b", "(\\w+\\s?)*$", "(a)\\1", "x(?=y)", "a*b*c*d", "x".repeat(300)]) {
      expect(patternProblem(bad), bad).not.toBeNull();
      expect(agent(bad).success, bad).toBe(false);
    }
    expect(Guard.safeParse({ rules: [{ verdict: "deny", reason: "r", arguments: [{ path: "no-slash", pattern: "x" }] }] }).success).toBe(false);
    expect(Guard.safeParse({ rules: [{ verdict: "maybe", reason: "r" }] }).success).toBe(false);
  });

  it("bounds the work of a backtracking pattern by the value's length; a longer value matches a deny rule, never an allow rule", () => {
    // Polynomial backtracking on a value at the bound: still quick.
    const slow = ".*a.*b$";
    expect(patternProblem(slow)).toBeNull();
    const value = "a".repeat(GUARD_VALUE_CHARS);
    const started = performance.now();
    expect(evaluateGuard(rules({ arguments: [{ path: "/q", pattern: slow }], verdict: "deny", reason: "r" }), call({ arguments: { q: value } })).verdict).toBe("allow");
    expect(performance.now() - started).toBeLessThan(1_000);
    const long = { q: "a".repeat(GUARD_VALUE_CHARS + 1) };
    expect(evaluateGuard(rules({ arguments: [{ path: "/q", pattern: "^z" }], verdict: "deny", reason: "r" }), call({ arguments: long })).verdict).toBe("deny");
    expect(evaluateGuard(rules({ arguments: [{ path: "/q", pattern: "^a" }], verdict: "allow", reason: "r" }, { tool: "*", verdict: "deny", reason: "else" }), call({ arguments: long })).verdict).toBe("deny");
  });
});
