import { ok, type Result } from "../../core/problem";
import { newNonce } from "../../core/runtime-tag";
import type { TurnResult } from "../../protocol/frontend";
import type { TurnBody } from "../../protocol/http";
import { admit } from "./admit";
import { assemble } from "./assemble";
import { commit } from "./commit";
import { compact } from "./compact";
import type { ConversationScope } from "../scope";
import type { TurnOptions } from "./options";
import { identify } from "./identify";
import { load } from "./load";
import { offerTools } from "./offer-tools";
import { pull } from "./pull";
import { recall } from "./recall";
import { remind } from "./remind";
import { runTools } from "./run-tools";
import { StageTrace } from "./stage";
import { hookBlocks } from "./hook-blocks";
import { hookInput } from "./hook-input";
import { hookOutput } from "./hook-output";
import { notifyTurnEnd } from "./turn-end";

export type { TurnOptions } from "./options";
export { UNANSWERED_RESULT } from "./admit";
export { checkAttachable } from "./pull";

/**
 * One turn, as a pipeline of named stages over one draft: load (replay, policy, approvals) → pull (agent, contexts)
 * → input (hooks on the user's message) → output (hooks on the model's reply) → run (the tools the runtime serves)
 * → admit (message, reply, tool results, decisions) → recall (memory, task state) → identify (identity, persona)
 * → tools → reminders → assembled (hooks on the blocks) → compact → assemble → commit (one transaction); then the
 * `turn.end` hooks hear of it. Each stage adds its part and says what it decided; a refusal before commit stores nothing.
 */
export async function takeTurn(given: ConversationScope, body: TurnBody, options: TurnOptions = {}): Promise<Result<TurnResult>> {
  // A conversation started before nonces gets its nonce at its first turn since: every tag the turn writes carries it.
  const scope = given.meta.nonce === null ? { ...given, meta: { ...given.meta, nonce: given.db.conversation.giveNonce(newNonce()) } } : given;
  const trace = new StageTrace();
  const loaded = await trace.run("load", {}, () => load(scope, body, options));
  if (!loaded.ok) return loaded;
  if (loaded.value.replayed) return ok(loaded.value.replayed);
  const pulled = await trace.run("pull", loaded.value, pull);
  if (!pulled.ok) return pulled;
  const input = await trace.run("input", pulled.value, hookInput);
  if (!input.ok) return input;
  const output = await trace.run("output", input.value, hookOutput);
  if (!output.ok) return output;
  const ran = await trace.run("run", output.value, runTools);
  if (!ran.ok) return ran;
  const admitted = await trace.run("admit", ran.value, admit);
  if (!admitted.ok) return admitted;
  const recalled = await trace.run("recall", admitted.value, recall);
  if (!recalled.ok) return recalled;
  const identified = await trace.run("identify", recalled.value, identify);
  if (!identified.ok) return identified;
  const offered = await trace.run("tools", identified.value, offerTools);
  if (!offered.ok) return offered;
  const reminded = await trace.run("reminders", offered.value, remind);
  if (!reminded.ok) return reminded;
  const intercepted = await trace.run("assembled", reminded.value, hookBlocks);
  if (!intercepted.ok) return intercepted;
  const compacted = await trace.run("compact", intercepted.value, compact);
  if (!compacted.ok) return compacted;
  const assembled = await trace.run("assemble", compacted.value, assemble);
  if (!assembled.ok) return assembled;
  const committed = commit(assembled.value, trace.records);
  if (!committed.ok) return committed;
  notifyTurnEnd(assembled.value);
  return ok({ ...assembled.value.result, messages: assembled.value.assembly.messages, replayed: false });
}
