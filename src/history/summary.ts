/**
 * What a summariser reads and writes. Compaction hands it the stored messages
 * a new summary must cover (already redacted) and the previous summary, which
 * the new one updates rather than stacks on. Summarisers are replaceable: the
 * default digest needs no model; a model summariser calls an endpoint (and the
 * digest stands in when it fails: history/summarise.ts).
 */
import * as z from "zod";

export const SummaryRole = z.enum(["user", "assistant", "tool", "system"]);

export interface SummaryInputMessage {
  seq: number;
  role: z.infer<typeof SummaryRole>;
  content: string;
  /** On an assistant message that called tools: what it called. */
  toolCalls?: { name: string; arguments: string }[];
  /** On a tool result: the tool that produced it. */
  toolName?: string;
  /** On a tool result: the runtime wrote it because the user denied the call (with their reason, if they gave one). */
  denied?: { reason: string | null };
  createdAt: string;
}

/** The summary a compaction produced before this one; `state` is whatever that summariser kept to update it exactly. */
export interface PreviousSummary {
  text: string;
  summariser: string;
  state: unknown;
}

export interface SummaryRequest {
  previous: PreviousSummary | null;
  messages: readonly SummaryInputMessage[];
  /** The summary's text must not count more tokens than this. */
  maxTokens: number;
}

export interface SummaryDraft {
  /** Plain text; the runtime fences it and neutralises any runtime tags in it. */
  text: string;
  /** Kept with the summary and handed back as `previous.state` next time. */
  state: unknown;
  /** What the summary knowingly left out, one short line each. */
  loss: string[];
  /** Who wrote it, when not the summariser asked: the digest, standing in for a model that gave no summary. */
  summariser?: string;
}

export interface Summariser {
  readonly name: string;
  summarise(request: SummaryRequest): Promise<SummaryDraft>;
}
