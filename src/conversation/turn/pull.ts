import { contextKey } from "../../core/attachments";
import type { Observation } from "../../core/ledger";
import { LIMITS } from "../../protocol/limits";
import { fail, ok, type Result } from "../../core/problem";
import type { AppPort } from "../../hub/port";
import { admitText, type SecretHit } from "../../protect";
import type { AgentInfo } from "../../protocol/frontend";
import type { Toolbox } from "../../protocol/tools";
import type { Attachment } from "../../protocol/http";
import type { ConversationScope } from "../scope";
import type { Loaded } from "./load";
import type { Staged } from "./stage";
import type { HookScope } from "../../hooks/chain";

export interface Pulled {
  agent: AgentInfo;
  /** The agent's tools (bound and catalog) and skills, as the apps registered them. */
  toolbox: Toolbox;
  /** Attachments this turn's body adds to the conversation. */
  added: { ref: string; itemId?: string }[];
  /** Attached contexts past the trust boundary, then session resources, in the order the appendix shows them. */
  observations: Observation[];
  /** Secrets redacted from what the apps sent (contexts now, the persona note later), by where they were. */
  contextHits: (SecretHit & { id: string })[];
  /** The hooks registered for the agent's turns, and the record of every call made to them this turn. */
  hooks: HookScope;
}

/**
 * The agent, and every context it and the user attached, pulled from the apps in parallel under the deadline (a
 * continuation pulls nothing: contexts ride with user messages). What comes back passes the trust boundary.
 */
export async function pull(d: Loaded): Promise<Result<Staged<Pulled>>> {
  const { scope, body, continuation, nonce } = d;
  const added = body.attachments?.length ? await newAttachments(scope, body.attachments) : ok([]);
  if (!added.ok) return added;
  const runtime = [...scope.db.attachments.list().map((a) => ({ ref: a.context, itemId: a.itemId })), ...added.value];
  // A subagent's conversation is not the user's: it never becomes the one their apps' pushes go to.
  const { cache } = scope;
  const known = cache.toolbox?.agent === body.agent ? cache.toolbox : null;
  const answer = await scope.apps.prepareTurn(scope.meta.conversationId, body.agent, continuation ? null : runtime, scope.meta.parent === null, known?.version ?? null);
  if (!answer) return fail("not-found", `no agent '${body.agent}' is registered; an app creates it with agents/create`);
  const toolbox = answer.toolbox ?? known?.toolbox;
  if (!toolbox) return fail("provider-unavailable", `the hub sent no toolbox for agent '${body.agent}', and none is kept`);
  if (answer.toolbox) cache.toolbox = { agent: body.agent, version: answer.toolboxVersion, toolbox: answer.toolbox };
  const prepared = { toolbox, pulled: answer.pulled };
  const contextHits: Pulled["contextHits"] = [];
  const admit = (id: string, text: string) => {
    const admitted = admitText(text, { nonce });
    for (const hit of admitted.hits) contextHits.push({ ...hit, id });
    return admitted.text;
  };
  // A context pulled again at the version already admitted is not admitted again: large contexts rarely change.
  let reused = 0;
  const pulled = prepared.pulled.map((o) => {
    if (o.status !== "present") return o;
    const known = scope.cache.contexts.get(o.key);
    if (known?.version === o.version) reused++;
    const admitted = known?.version === o.version ? known : { version: o.version, title: admit(o.key, o.title), content: admit(o.key, o.content) };
    scope.cache.contexts.set(o.key, admitted);
    return { ...o, title: admitted.title, content: admitted.content };
  });
  const resources: Observation[] = scope.db.resources.list().map((r) => ({ key: r.fullId, kind: "resource", status: "present", title: r.title, version: r.version, content: r.content }));
  const count = (status: Observation["status"]) => pulled.filter((o) => o.status === status).length;
  return ok({
    out: {
      agent: prepared.toolbox.agent,
      toolbox: prepared.toolbox,
      added: added.value,
      observations: [...pulled, ...resources],
      contextHits,
      hooks: { host: d.tools, conversationId: scope.meta.conversationId, turnId: d.turnId, agent: prepared.toolbox.agent.id, hooks: prepared.toolbox.hooks ?? [], log: [] },
    },
    decided: { agent: prepared.toolbox.agent.id, pulled: pulled.length, present: count("present"), empty: count("empty"), missing: count("missing"), kept: prepared.pulled.filter((o) => o.kept).length, reused, resources: resources.length, attached: added.value.length, hooks: prepared.toolbox.hooks?.length ?? 0 },
  });
}

/** Attachments riding in the turn body: checked against the registry, never fetched twice. */
async function newAttachments(scope: ConversationScope, attachments: readonly Attachment[]): Promise<Result<{ ref: string; itemId?: string }[]>> {
  const existing = new Set(scope.db.attachments.list().map((a) => a.key));
  const fresh = attachments.filter((a) => !existing.has(contextKey(a.context, a.itemId)));
  if (existing.size + fresh.length > LIMITS.attachmentsPerConversation) {
    return fail("limit-exceeded", `a conversation may have at most ${LIMITS.attachmentsPerConversation} attachments`);
  }
  for (const a of fresh) {
    const checked = await checkAttachable(scope.apps, a);
    if (!checked.ok) return checked;
  }
  return ok(fresh.map((a) => (a.itemId === undefined ? { ref: a.context } : { ref: a.context, itemId: a.itemId })));
}

export async function checkAttachable(hub: Pick<AppPort, "provider">, a: Attachment): Promise<Result<true>> {
  const provider = await hub.provider(a.context);
  if (!provider) return fail("not-found", `no app has registered provider '${a.context}'`);
  const method = a.itemId === undefined ? "current" : "get";
  if (!provider.methods.includes(method)) {
    return fail("invalid-request", `'${a.context}' cannot be attached ${a.itemId === undefined ? "without" : "with"} an itemId: it does not implement '${method}'`);
  }
  return ok(true);
}
