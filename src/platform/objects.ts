import type { Owner } from "../protocol/owner";
import type { Env } from "./env";

/**
 * The Durable Objects by name. Names derive from the authenticated tenant (and user), never from a body, so one tenant
 * can never address another's objects. The stubs are untyped here: each caller types one by the interface its object
 * implements (src/hub/port.ts, src/conversation/scope.ts) or by its class (src/hub/stub.ts, src/conversation/stub.ts).
 */
export function conversationObject(env: Env, owner: Owner, conversationId: string): DurableObjectStub {
  return env.CONVERSATIONS.get(env.CONVERSATIONS.idFromName(`${owner.tenant}/${conversationId}`));
}

/** The user's hub: one per tenant and user. */
export function hubObject(env: Env, owner: Owner): DurableObjectStub {
  return env.APP_HUB.get(env.APP_HUB.idFromName(`${owner.tenant}/${owner.user}`));
}
