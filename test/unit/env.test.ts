import { describe, expect, it } from "vitest";
import { memoryHalfLifeHours, providerDeadlineMs } from "../../src/platform/config";
import type { Env } from "../../src/platform/env";

const env = (vars: Partial<Env>) => vars as Env;

describe("deployment settings", () => {
  it("reads the provider deadline and the memory half-life from vars, falling back when missing or invalid", () => {
    expect(providerDeadlineMs(env({ PROVIDER_DEADLINE_MS: "750" }))).toBe(750);
    expect(providerDeadlineMs(env({ PROVIDER_DEADLINE_MS: "soon" }))).toBe(2000);
    expect(memoryHalfLifeHours(env({ MEMORY_HALF_LIFE_HOURS: "48" }))).toBe(48);
    for (const bad of [undefined, "", "0", "-5", "week"]) expect(memoryHalfLifeHours(env({ MEMORY_HALF_LIFE_HOURS: bad }))).toBeUndefined();
  });
});
