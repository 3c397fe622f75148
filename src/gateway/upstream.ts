/**
 * A gateway step's upstream call, through the one model client (src/model/): opened first, so an error status is
 * the request's own error before anything is sent to the client, then read, whole or as it streams. Failures come
 * back in OpenAI's shape (errors.ts `upstreamError`), once.
 */
import type { ModelUsage } from "../conversation/gateway-store";
import { failWith, ok, type Result } from "../core/problem";
import { modelClient, type ModelRequest, type StepAnswer, type TextDeltaSink } from "../model";
import type { UpstreamConfig } from "../platform/config";
import { upstreamError, type GatewayError } from "./errors";

/** An answer the upstream accepted, read when the loop asks (a streamed one sends its text to `onText` as it comes). */
export type PendingAnswer = (onText: TextDeltaSink) => Promise<Result<StepAnswer, GatewayError>>;

export async function callUpstream(config: UpstreamConfig, body: ModelRequest, stream: boolean): Promise<Result<PendingAnswer, GatewayError>> {
  const client = modelClient(config);
  if (!stream) {
    const answer = await client.complete(body);
    return answer.ok ? ok(async () => answer) : failWith(upstreamError(answer.problem));
  }
  const opened = await client.stream(body);
  if (!opened.ok) return failWith(upstreamError(opened.problem));
  return ok(async (onText) => {
    const read = await opened.value.read(onText);
    return read.ok ? read : failWith(upstreamError(read.problem));
  });
}

/** A step's usage as the conversation records it (a `model.usage` event on the turn whose input it read); none when the upstream reported none. */
export function stepUsage(answer: StepAnswer, turnId: string, step: number): ModelUsage[] {
  const u = answer.usage;
  if (!u) return [];
  return [{ turnId, step, model: answer.model, promptTokens: u.promptTokens, completionTokens: u.completionTokens, cachedTokens: u.cachedTokens, ...(u.cacheWriteTokens != null ? { cacheWriteTokens: u.cacheWriteTokens } : {}) }];
}
