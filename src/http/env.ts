import type { TimingVariables } from "hono/timing";
import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";

/** What every authenticated route sees: the bindings, and the owner its credential names (set by ./auth.ts). */
export type ApiEnv = { Bindings: Env; Variables: { owner: Owner } & TimingVariables };
