/**
 * Choosing the summariser and never failing a compaction because of it: the
 * model summariser is used when the policy asks for it and the deployment
 * configured one; when its endpoint fails, the digest summarises instead and
 * the loss notes say so.
 */
import { countTokens } from "../core/tokens";
import { digestSummariser } from "./digest";
import { modelSummariser, type ModelSummariserConfig } from "./model-summariser";
import type { CompactionPolicy } from "./policy";
import type { Summariser, SummaryDraft, SummaryRequest } from "./summary";

export function chooseSummariser(kind: CompactionPolicy["summariser"], model: ModelSummariserConfig | null): Summariser {
  return kind === "model" && model ? modelSummariser(model) : digestSummariser;
}

export async function summariseSafely(summariser: Summariser, request: SummaryRequest): Promise<SummaryDraft & { summariser: string }> {
  if (summariser === digestSummariser) return { ...(await digestSummariser.summarise(request)), summariser: digestSummariser.name };
  try {
    const draft = await summariser.summarise(request);
    if (countTokens(draft.text) <= request.maxTokens) return { ...draft, summariser: summariser.name };
    throw new Error(`its summary exceeded ${request.maxTokens} tokens`);
  } catch (error) {
    const draft = await digestSummariser.summarise(request);
    const why = error instanceof Error ? error.message : String(error);
    return { ...draft, loss: [`${summariser.name} failed (${why}); the digest summarised instead`, ...draft.loss], summariser: digestSummariser.name };
  }
}
