import type { Attachment, TurnBody } from "../api/schemas";
import { assembleTurn } from "../core/assemble";
import { contextKey } from "../core/attachments";
import type { Observation } from "../core/ledger";
import { LIMITS } from "../core/limits";
import { fail, ok, type Result } from "../core/problem";
import { sha256Hex } from "../core/version";
import type { AppHub } from "../hub/app-hub";
import type { TurnResult } from "../protocol/frontend";
import type { ConversationMeta, ConversationStore, TurnRecord } from "./store";

export interface TurnDeps {
  store: ConversationStore;
  hub: DurableObjectStub<AppHub>;
  meta: ConversationMeta;
  now: () => Date;
}

type StoredTurnResult = Omit<TurnResult, "messages" | "replayed">;

/** One turn: replay if already answered, else pull, diff, assemble, and persist it all at once. */
export async function takeTurn(deps: TurnDeps, body: TurnBody): Promise<Result<TurnResult>> {
  const { store, hub, meta } = deps;
  const turnId = body.turnId ?? crypto.randomUUID();
  const requestDigest = await sha256Hex(JSON.stringify([body.agent, body.message, body.attachments ?? []]));

  const prior = store.turn(turnId);
  if (prior) {
    return prior.requestDigest === requestDigest
      ? ok(replay(store, prior))
      : fail("conflict", `turnId '${turnId}' was already used for a different request`);
  }
  if (meta.endedAt) return fail("conflict", "this conversation has ended");

  const added = body.attachments?.length ? await newAttachments(deps, body.attachments) : ok([]);
  if (!added.ok) return added;

  const prepared = await hub.prepareTurn(meta.conversationId, body.agent, [
    ...store.attachments().map((a) => ({ ref: a.context, itemId: a.itemId })),
    ...added.value,
  ]);
  if (!prepared) return fail("not-found", `no agent '${body.agent}' is registered; an app creates it with agents/create`);
  const { agent, pulled } = prepared;
  const resources: Observation[] = store.resources().map((r) => ({
    key: r.fullId,
    kind: "resource",
    status: "present",
    title: r.title,
    version: r.version,
    content: r.content,
  }));

  const now = deps.now();
  const at = now.toISOString();
  const history = store.messages().map((m) => m.message);
  const assembled = assembleTurn({
    turnId,
    conversationId: meta.conversationId,
    now,
    systemPrompt: agent.systemPrompt,
    history,
    userText: body.message,
    ledger: store.ledger(),
    observations: [...pulled, ...resources],
  });
  if (!assembled.ok) return assembled;
  const assembly = assembled.value;
  const result: StoredTurnResult = {
    turnId,
    conversationId: meta.conversationId,
    agent: { id: agent.id, name: agent.name, tools: agent.tools },
    usage: assembly.usage,
    missing: assembly.missing,
    envelope: assembly.envelope,
  };

  store.transaction(() => {
    if (meta.agent !== agent.id || !sameList(meta.agentContexts, agent.attachedContexts)) store.setAgent(agent.id, agent.attachedContexts);
    for (const a of added.value) store.attach(contextKey(a.ref, a.itemId), a.ref, a.itemId, at);
    const userSeq = store.appendMessage(turnId, assembly.userMessage!, at);
    for (const entry of assembly.ledger.upserts) store.recordInjection(entry, turnId, userSeq, at);
    for (const gone of assembly.ledger.deletes) store.forget(gone.kind, gone.key);
    store.saveTurn({ turnId, requestDigest, systemPrompt: agent.systemPrompt, userSeq, result: JSON.stringify(result) }, at);
    recordTurnEvents(store, result, at);
  });
  return ok({ ...result, messages: assembly.messages, replayed: false });
}

function replay(store: ConversationStore, prior: TurnRecord): TurnResult {
  const stored = JSON.parse(prior.result) as StoredTurnResult;
  const history = store.messages(prior.userSeq).map((m) => m.message);
  return { ...stored, messages: [{ role: "system", content: prior.systemPrompt }, ...history], replayed: true };
}

/** Attachments riding in the turn body: checked against the registry, never fetched twice. */
async function newAttachments(deps: TurnDeps, attachments: readonly Attachment[]): Promise<Result<{ ref: string; itemId?: string }[]>> {
  const existing = new Set(deps.store.attachments().map((a) => a.key));
  const fresh = attachments.filter((a) => !existing.has(contextKey(a.context, a.itemId)));
  if (existing.size + fresh.length > LIMITS.attachmentsPerConversation) {
    return fail("limit-exceeded", `a conversation may have at most ${LIMITS.attachmentsPerConversation} attachments`);
  }
  for (const a of fresh) {
    const checked = await checkAttachable(deps.hub, a);
    if (!checked.ok) return checked;
  }
  return ok(fresh.map((a) => (a.itemId === undefined ? { ref: a.context } : { ref: a.context, itemId: a.itemId })));
}

export async function checkAttachable(hub: DurableObjectStub<AppHub>, a: Attachment): Promise<Result<true>> {
  const provider = await hub.provider(a.context);
  if (!provider) return fail("not-found", `no app has registered provider '${a.context}'`);
  const method = a.itemId === undefined ? "current" : "get";
  if (!provider.methods.includes(method)) {
    return fail("invalid-request", `'${a.context}' cannot be attached ${a.itemId === undefined ? "without" : "with"} an itemId: it does not implement '${method}'`);
  }
  return ok(true);
}

function recordTurnEvents(store: ConversationStore, result: StoredTurnResult, at: string): void {
  const { envelope } = result;
  for (const i of envelope.injection) {
    const type = i.marker === "removed" ? "context.removed" : "context.injection.applied";
    store.addEvent(result.turnId, type, i.id, { kind: i.kind, marker: i.marker }, at);
  }
  for (const m of result.missing) store.addEvent(result.turnId, "context.missing", m.id, { reason: m.reason, detail: m.detail }, at);
  store.addEvent(result.turnId, "turn.assembled", result.agent.id, { usage: result.usage }, at);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
