/**
 * Choosing the summariser and never failing a compaction because of it: the
 * model summariser is used when the policy asks for it and the deployment
 * configured one; when its endpoint fails, the digest summarises instead and
 * the loss notes say so.
 */
import { countTokens } from "../core/tokens";
import { redact } from "../protect/redact";
import { digestSummariser } from "./digest";
import { modelSummariser, type ModelSummariserConfig } from "./model-summariser";
import type { CompactionPolicy } from "../protocol/policies";
import type { Summariser, SummaryDraft, SummaryRequest } from "./summary";

export function chooseSummariser(kind: CompactionPolicy["summariser"], model: ModelSummariserConfig | null): Summariser {
  return kind === "model" && model ? modelSummariser(model) : digestSummariser;
}

/**
 * A summary is stored redacted whoever wrote it: a model may spell out what its redacted input only hinted at. It
 * is neutralised when shown (history/view.ts), as it quotes every channel.
 */
export async function summariseSafely(summariser: Summariser, request: SummaryRequest): Promise<SummaryDraft & { summariser: string }> {
  const drafted = await summariseOrFallBack(summariser, request);
  return { ...drafted, text: redact(drafted.text).text, loss: drafted.loss.map((note) => redact(note).text) };
}

async function summariseOrFallBack(summariser: Summariser, request: SummaryRequest): Promise<SummaryDraft & { summariser: string }> {
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
