import { fail, ok, type Result } from "../../core/problem";
import { reviewOutput } from "../../hooks/output";
import type { Loaded } from "./load";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

/**
 * The `output` hooks on the model's reply a frontend sends with its turn (docs/hooks.md): a rejection refuses the turn
 * before any of the reply's calls runs or anything is stored, and its note tells the frontend what to ask the model for
 * instead. (The gateway asks the model again itself.)
 */
export async function hookOutput(d: Loaded & Pulled): Promise<Result<Staged<object>>> {
  const reply = d.body.reply;
  if (reply === undefined || d.options.outputReviewed) return ok({ out: {}, decided: { hooks: 0 } });
  const review = await reviewOutput(d.hooks, { request: d.scope.db.messages.lastUserText(), reply, attempt: 0 }, d.nonce);
  if (review.verdict === "reject") {
    return fail("not-accepted", `hook '${review.hook}' rejected the model's answer: ${review.note}`, [{ path: "reply", message: review.note }]);
  }
  return ok({ out: {}, decided: { hooks: review.hooks } });
}
