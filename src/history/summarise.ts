/**
 * Choosing the summariser and never failing a compaction because of it: the model summariser is used when the policy
 * asks for it and the deployment configured one; when it fails (its endpoint, or a summary over the bound), the digest
 * summarises instead and the loss notes say so.
 */
import { countTokens } from "../core/tokens";
import { redact } from "../protect";
import { digestSummariser } from "./digest";
import { modelSummariser, type ModelSummariser, type ModelSummariserConfig } from "./model-summariser";
import type { CompactionPolicy } from "../protocol/policies";
import type { Summariser, SummaryDraft, SummaryRequest } from "./summary";

export function chooseSummariser(kind: CompactionPolicy["summariser"], model: ModelSummariserConfig | null): Summariser {
  return kind === "model" && model ? orDigest(modelSummariser(model)) : digestSummariser;
}

/** The model summariser, the digest standing in when it gives no draft. */
function orDigest(model: ModelSummariser): Summariser {
  return {
    name: model.name,
    async summarise(request) {
      const drafted = await model.summarise(request);
      return drafted.ok ? drafted.value : digestInstead(model.name, drafted.problem, request);
    },
  };
}

/** The digest's summary, its loss notes first saying why `failed` did not write it. */
async function digestInstead(failed: string, why: string, request: SummaryRequest): Promise<SummaryDraft & { summariser: string }> {
  const draft = await digestSummariser.summarise(request);
  return { ...draft, loss: [`${failed} failed (${why}); the digest summarised instead`, ...draft.loss], summariser: digestSummariser.name };
}

/**
 * A summary is stored redacted whoever wrote it: a model may spell out what its redacted input only hinted at. It
 * is neutralised when shown (history/view.ts), as it quotes every channel.
 */
export async function summariseSafely(summariser: Summariser, request: SummaryRequest): Promise<SummaryDraft & { summariser: string }> {
  const drafted = await summariseWithinBound(summariser, request);
  return { ...drafted, text: redact(drafted.text).text, loss: drafted.loss.map((note) => redact(note).text) };
}

async function summariseWithinBound(summariser: Summariser, request: SummaryRequest): Promise<SummaryDraft & { summariser: string }> {
  const draft = await summariser.summarise(request);
  const by = draft.summariser ?? summariser.name;
  if (by === digestSummariser.name || countTokens(draft.text) <= request.maxTokens) return { ...draft, summariser: by };
  return digestInstead(summariser.name, `its summary exceeded ${request.maxTokens} tokens`, request);
}
