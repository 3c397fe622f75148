import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import type { AppHub } from "./app-hub";
import { hubObject } from "../platform/objects";

/** The user's hub: one per tenant and user, named from the verified credential only. */
export function hubStub(env: Env, owner: Owner): DurableObjectStub<AppHub> {
  // The namespace is untyped in Env (it imports no Durable Object class); this module is where the hub's type is known.
  return hubObject(env, owner) as unknown as DurableObjectStub<AppHub>;
}
