/**
 * What a conversation holds besides its messages, as it comes in: the contexts the user attaches (checked with the
 * hub first) and the session resources apps push (docs/protocol.md, `resources/push`), which pass the trust boundary
 * before they are stored.
 */
import { acknowledgedApps, contextKey, mergeAttachments } from "../core/attachments";
import { fail, ok, type Result } from "../core/problem";
import { contextVersion } from "../core/version";
import { auditRecords, admitText, type SecretHit } from "../protect";
import type { AttachmentInfo, ResourceInfo } from "../protocol/frontend";
import type { Attachment } from "../protocol/http";
import { LIMITS } from "../protocol/limits";
import type { ConversationScope } from "./scope";
import type { PushedResource } from "../hub/port";
import { checkAttachable } from "./turn/index";

/** A picked item is fetched once here so the user learns at once if it does not exist. */
export async function attachContext(scope: Pick<ConversationScope, "db" | "apps" | "now">, attachment: Attachment): Promise<Result<{ attachments: AttachmentInfo[] }>> {
  const { db: store, apps: hub } = scope;
  if (store.attachments.list().length >= LIMITS.attachmentsPerConversation) {
    return fail("limit-exceeded", `a conversation may have at most ${LIMITS.attachmentsPerConversation} attachments`);
  }
  const checked = await checkAttachable(hub, attachment);
  if (!checked.ok) return checked;
  if (attachment.itemId !== undefined) {
    const item = await hub.item(attachment.context, attachment.itemId);
    if (!item.ok) return item;
    if (item.value === null) return fail("not-found", `'${attachment.context}' has no item '${attachment.itemId}'`);
  }
  const key = contextKey(attachment.context, attachment.itemId);
  const at = scope.now().toISOString();
  if (store.attachments.attach(key, attachment.context, attachment.itemId, at)) store.events.add(null, "attachment.added", key, {}, at);
  return ok({ attachments: store.attachments.list() });
}

/** Pushed by an app through the hub; only apps this conversation acknowledges may push. */
export async function storePushedResource(scope: Pick<ConversationScope, "db" | "meta" | "auditKey" | "now">, app: string, resource: PushedResource): Promise<Result<ResourceInfo>> {
  const { db: store, meta } = scope;
  const allowed = acknowledgedApps(mergeAttachments(meta.agentContexts, store.attachments.list().map((a) => ({ ref: a.context, itemId: a.itemId }))));
  if (!allowed.has(app)) {
    return fail(
      "forbidden",
      `app '${app}' may not push into this conversation: its agent (${meta.agent ?? "none yet"}) does not name '${app}' in attachedContexts and the user has not attached any of its contexts`,
    );
  }
  const replacing = store.resources.get(resource.fullId) !== null;
  if (!replacing && store.resources.list().length >= LIMITS.resourcesPerConversation) {
    return fail("limit-exceeded", `a conversation holds at most ${LIMITS.resourcesPerConversation} resources`);
  }
  const at = scope.now().toISOString();
  // The app's text passes the trust boundary before it is stored, titles included (they show in listings).
  const hits: SecretHit[] = [];
  const admit = (text: string) => {
    const admitted = admitText(text, { nonce: meta.nonce });
    hits.push(...admitted.hits);
    return admitted.text;
  };
  const admitted = { ...resource, title: admit(resource.title), content: admit(resource.content), ...(resource.summary === undefined ? {} : { summary: admit(resource.summary) }) };
  const record = { ...admitted, app, version: await contextVersion(resource), updatedAt: at };
  const redactions = await auditRecords(hits, await scope.auditKey());
  store.transaction(() => {
    store.resources.put(record);
    store.events.add(null, replacing ? "resource.replaced" : "resource.pushed", resource.fullId, { app, version: record.version, ...(redactions.length ? { redactions } : {}) }, at);
  });
  const { content: _content, ...info } = store.resources.get(resource.fullId)!;
  return ok(info);
}
