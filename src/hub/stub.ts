import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import type { AppHub } from "./app-hub";

/** The user's hub: one per tenant and user, named from the verified credential only. */
export function hubStub(env: Env, owner: Owner): DurableObjectStub<AppHub> {
  // The namespace is untyped in Env (it imports no Durable Object class); this module is where the hub's type is known.
  return (env.APP_HUB as DurableObjectNamespace<AppHub>).get(env.APP_HUB.idFromName(`${owner.tenant}/${owner.user}`));
}
