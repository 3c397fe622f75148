import { describe, expect, it } from "vitest";
import { benchArtifactTokens } from "../../bench/artifacts";

describe("benchArtifactTokens", () => {
  it("a ~15 KB artifact costs its full payload in tokens, its ref and three fields a small fraction", () => {
    const figures = benchArtifactTokens();
    expect(figures.artifactBytes).toBeGreaterThan(14_000);
    expect(figures.artifactBytes).toBeLessThan(16_000);
    expect(figures.pointerTokens).toBeGreaterThan(0);
    expect(figures.resolvedTokens).toBeGreaterThan(0);
    expect(figures.fullTokens).toBeGreaterThan(10 * (figures.pointerTokens + figures.resolvedTokens));
  });
});
