import type { Env } from "../platform/env";
import type { Owner } from "../protocol/owner";
import type { Conversation } from "./conversation";
import { conversationObject } from "../platform/objects";

/** Storage names derive from the authenticated tenant, so one tenant can never address another's objects. */
export function conversationStub(env: Env, owner: Owner, conversationId: string): DurableObjectStub<Conversation> {
  // The namespace is untyped in Env (it imports no Durable Object class); this module is where the object's type is known.
  return conversationObject(env, owner, conversationId) as unknown as DurableObjectStub<Conversation>;
}
