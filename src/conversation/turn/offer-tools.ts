import { ok, type Result } from "../../core/problem";
import type { Pulled } from "./pull";
import type { Staged } from "./stage";

export interface Offered {
  /** The agent works with tools: the system message says how their results arrive. */
  hasTools: boolean;
}

/** What the model can do this turn. */
export function offerTools(d: Pulled): Result<Staged<Offered>> {
  return ok({ out: { hasTools: d.agent.tools.length > 0 }, decided: { bound: d.agent.tools.length } });
}
