/** The model client of an upstream: the API its configuration names (`UPSTREAM_API`, OpenAI's by default). */
import type { UpstreamConfig } from "../platform/config";
import { anthropicClient } from "./anthropic";
import type { ModelClient } from "./client";
import { openAIClient } from "./openai";

export type { AnswerStream, CallOptions, ModelClient, ModelError, ModelRequest, ModelResult, StepAnswer, TextDeltaSink } from "./client";

/** `fetch`: what posts the requests (a stand-in in tests); the platform's otherwise. */
export function modelClient(config: UpstreamConfig, options: { fetch?: typeof fetch } = {}): ModelClient {
  // Called through a closure: browsers reject `fetch` invoked as a method of another object.
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return config.api === "anthropic" ? anthropicClient(config, send) : openAIClient(config, send);
}
