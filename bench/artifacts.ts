/**
 * Tokens a model reads to use a ~15 KB search-results artifact (40 results with
 * title, url and snippet, plus market_size, cagr and report_urls): the whole
 * payload pasted into its input, against the artifact's line in the task state
 * (`renderTaskState`) plus three fields resolved by declareFields. Pure: the
 * same functions the runtime uses, no server. Prints nothing.
 */
import { FieldResolution } from "../src/artifacts/declare-fields";
import { schemaKeysOf, structuralSummary } from "../src/artifacts/shape";
import { formatPointer, type ArtifactRef } from "../src/protocol/artifacts";
import { renderTaskState } from "../src/artifacts/task-state";
import { countTokens } from "../src/core/tokens";

const VENDORS = ["Gartner", "IDC", "Forrester", "Canalys", "Synergy", "Statista", "McKinsey", "Deloitte"];
const TOPICS = ["public cloud spending", "IaaS growth", "SaaS consolidation", "sovereign cloud", "AI infrastructure", "multi-cloud adoption", "edge computing", "cloud security"];

/** The artifact step 1 of the seed's pipeline produces: ~15 KB of JSON. */
export function searchResultsArtifact() {
  const results = Array.from({ length: 40 }, (_, i) => {
    const vendor = VENDORS[i % VENDORS.length]!;
    const topic = TOPICS[(i * 3) % TOPICS.length]!;
    return {
      title: `${vendor}: 2026 forecast for ${topic} (report ${i + 1})`,
      url: `https://research.example.com/${vendor.toLowerCase()}/2026/${topic.replace(/ /g, "-")}-${i + 1}`,
      snippet: `${vendor} expects ${topic} to grow ${(12 + (i % 9)).toFixed(1)}% in 2026, led by North America and EMEA; enterprises shift budget from on-premises refresh cycles to managed services as AI workloads scale (survey of ${200 + i * 5} firms).`,
    };
  });
  return {
    query: "2026 cloud computing market forecasts",
    market_size: "$912.8B (2026, worldwide public cloud end-user spending)",
    cagr: "17.3% (2024-2029)",
    report_urls: results.slice(0, 5).map((r) => r.url),
    results,
  };
}

export function benchArtifactTokens(): { fullTokens: number; pointerTokens: number; resolvedTokens: number; artifactBytes: number } {
  const data = searchResultsArtifact();
  const json = JSON.stringify(data);
  const sizeBytes = new TextEncoder().encode(json).length;
  const keys = schemaKeysOf(data);
  const pointer = formatPointer({ conversation: "0f0dab1b-6a3e-4c1e-9a57-3b2f8c1d2e4f", task: "search", id: "9c4e1f2a7b3d", version: 1 });
  const ref: ArtifactRef = {
    id: "9c4e1f2a7b3d",
    task: "search",
    type: "search_results",
    pointer,
    summary: structuralSummary("search_results", data, sizeBytes),
    sizeBytes,
    schemaKeys: keys.keys,
    keyCount: keys.total,
    sha256: "0".repeat(64),
    version: 1,
    redacted: 0,
    createdAt: "2026-11-20T09:00:00.000Z",
  };
  const resolution = new FieldResolution(["market_size", "cagr", "report_urls"]);
  resolution.offer(pointer, data);
  return {
    fullTokens: countTokens(json),
    pointerTokens: countTokens(renderTaskState([ref])),
    resolvedTokens: resolution.finish().tokens,
    artifactBytes: sizeBytes,
  };
}
