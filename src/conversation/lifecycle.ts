import type { ConversationInfo } from "../protocol/frontend";
import type { ConversationScope } from "./scope";
import type { ConversationDb, ConversationMeta } from "./store";

/** A conversation as the API lists it. */
export function describeConversation(db: ConversationDb, meta: ConversationMeta): ConversationInfo {
  return {
    id: meta.conversationId,
    createdAt: meta.createdAt,
    endedAt: meta.endedAt,
    agent: meta.agent,
    messageCount: db.messages.count(),
    ...(meta.parent ? { parent: { ...meta.parent, depth: meta.depth } } : {}),
  };
}

/** Ends the session: resources are cleared and each app told; further turns are refused. Ending twice changes nothing. */
export async function endConversation(scope: Pick<ConversationScope, "db" | "meta" | "apps" | "now">): Promise<ConversationInfo & { resourcesRemoved: number }> {
  const { db, meta, apps } = scope;
  if (meta.endedAt) return { ...describeConversation(db, meta), resourcesRemoved: 0 };
  const resources = db.resources.list();
  const at = scope.now().toISOString();
  db.transaction(() => {
    for (const r of resources) db.resources.delete(r.fullId);
    // No decision can come any more: a frontend that lists approvals must not ask the user for one.
    db.approvals.expireAwaiting(db.messages.openCalls(), at);
    db.conversation.end(at);
    db.events.add(null, "conversation.ended", null, { resourcesRemoved: resources.length }, at);
  });
  await Promise.all([apps.conversationEnded(meta.conversationId, at), ...resources.map((r) => apps.notifyResourceRemoved(meta.conversationId, r.fullId))]);
  return { ...describeConversation(db, db.conversation.get()!), resourcesRemoved: resources.length };
}
