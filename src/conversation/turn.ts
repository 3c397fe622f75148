import type { Attachment, TurnBody } from "../protocol/http";
import { assembleTurn, renderNotShown, usageOf } from "../core/assemble";
import { PRIORITY } from "../core/budget";
import { auditRecords } from "../protect/audit";
import { admitText } from "../protect/boundary";
import { redact, type SecretHit } from "../protect/redact";
import { contextKey } from "../core/attachments";
import { systemMessage } from "../core/capabilities";
import { renderIdentity, renderPersonaSwitch } from "../core/identity";
import { reinjectionCosts } from "../core/reminder";
import type { Observation } from "../core/ledger";
import { LIMITS } from "../core/limits";
import type { AppendableMessage, ChatMessage, ImagePart } from "../protocol/messages";
import { fail, ok, type Result } from "../core/problem";
import { sha256Hex } from "../core/version";
import type { AppHub } from "../hub/app-hub";
import type { TurnResult } from "../protocol/frontend";
import { compactionLimits, withModelWindow, type CompactionPolicy } from "../history/policy";
import { summariseSafely } from "../history/summarise";
import type { Summariser } from "../history/summary";
import type { RenderedHistory } from "../history/view";
import type { CompactionReport, History, HistoryView } from "./history";
import type { ConversationMeta, ConversationStore, InjectedEntry, TurnRecord } from "./store";
import type { ApprovalStore } from "./approval-store";
import { APPROVAL_EXPIRED_RESULT, recordDecisions, turnApprovals } from "./approvals";
import { admitMessages, inCallOrder, storeAdmitted } from "./tool-results";
import { checkTurnFits, checkWholeView } from "./capacity";
import type { TurnSections } from "./turn-sections";

export interface TurnDeps {
  store: ConversationStore;
  hub: DurableObjectStub<AppHub>;
  meta: ConversationMeta;
  auditKey: CryptoKey;
  now: () => Date;
  history: History;
  approvals: ApprovalStore;
  summariser: (policy: CompactionPolicy) => Summariser;
  /** Contexts past the trust boundary, by key, at the version last pulled (kept by the Conversation object while it lives). */
  admittedContexts: Map<string, { version: string; title: string; content: string }>;
  /** Memory and task state for this turn's appendix, read by the caller (KV, R2). */
  sections?: (agent: { memory: boolean }) => Promise<TurnSections>;
}

type StoredTurnResult = Omit<TurnResult, "messages" | "replayed">;

/** What stands in for a result that never came, so the model never reads a call without an answer. */
export const UNANSWERED_RESULT = "[no result: this tool call was not answered before the conversation moved on]";

/**
 * One turn: replay if already answered; else admit the tool results it carries,
 * pull and diff the contexts (not on a continuation), assemble within the
 * budget, and persist it all at once.
 */
export async function takeTurn(deps: TurnDeps, body: TurnBody): Promise<Result<TurnResult>> {
  const { store, hub, meta, history } = deps;
  const { turnId: givenId, ...request } = body;
  const turnId = givenId ?? crypto.randomUUID();
  const requestDigest = await sha256Hex(JSON.stringify(request));

  const prior = store.turn(turnId);
  if (prior) {
    return prior.requestDigest === requestDigest ? ok(replay(deps, prior)) : fail("conflict", `turnId '${turnId}' was already used for a different request`);
  }
  if (meta.endedAt) return fail("conflict", "this conversation has ended");
  const policy = turnPolicy(meta.compactionPolicy, body.budget);
  if (!policy.ok) return policy;

  const continuation = body.message === undefined;
  const { nonce } = meta;
  const openCalls = store.openCalls();
  const approvals = turnApprovals(openCalls, deps.approvals, body, nonce);
  if (!approvals.ok) return approvals;
  const { checked: decisions, awaiting: awaitingApproval } = approvals.value;
  const added = body.attachments?.length ? await newAttachments(deps, body.attachments) : ok([]);
  if (!added.ok) return added;
  const runtime = [...store.attachments().map((a) => ({ ref: a.context, itemId: a.itemId })), ...added.value];
  const prepared = await hub.prepareTurn(meta.conversationId, body.agent, continuation ? null : runtime);
  if (!prepared) return fail("not-found", `no agent '${body.agent}' is registered; an app creates it with agents/create`);
  const { agent } = prepared;
  // Every text from outside passes the trust boundary before it is rendered or stored: apps' contexts and the persona.
  const contextHits: (SecretHit & { id: string })[] = [];
  const admit = (id: string, text: string) => {
    const admitted = admitText(text, { nonce });
    for (const hit of admitted.hits) contextHits.push({ ...hit, id });
    return admitted.text;
  };
  // A context pulled again at the version already admitted is not admitted again: large contexts rarely change.
  const pulled = prepared.pulled.map((o) => {
    if (o.status !== "present") return o;
    const known = deps.admittedContexts.get(o.key);
    const admitted = known?.version === o.version ? known : { version: o.version, title: admit(o.key, o.title), content: admit(o.key, o.content) };
    deps.admittedContexts.set(o.key, admitted);
    return { ...o, title: admitted.title, content: admitted.content };
  });

  const open = new Map(openCalls.calls);
  const callOrder = new Map([...open.keys()].map((id, i) => [id, i]));
  // A denial answers its call: the model reads that it was not run, and why.
  const results: AppendableMessage[] = [...decisions.denials, ...(body.toolResults ?? []).map((r): AppendableMessage => ({ role: "tool", ...r }))];
  const admitted = await admitMessages(open, results, {
    policies: agent.resultPolicies,
    auditKey: deps.auditKey,
    nonce,
    awaitingApproval,
    runtimeWritten: new Set(decisions.denials.flatMap((d) => (d.role === "tool" ? [d.tool_call_id] : []))),
  });
  if (!admitted.ok) return admitted;
  for (const m of admitted.value.messages) if (m.role === "tool") open.delete(m.tool_call_id);
  const unanswered = [...open].map(([id, name]) => (awaitingApproval.has(id) ? { id, name, awaitingApproval: true as const } : { id, name }));
  const closing: AppendableMessage[] = unanswered.map((c) => ({ role: "tool", tool_call_id: c.id, content: "awaitingApproval" in c ? APPROVAL_EXPIRED_RESULT : UNANSWERED_RESULT }));

  const resources: Observation[] = store.resources().map((r) => ({ key: r.fullId, kind: "resource", status: "present", title: r.title, version: r.version, content: r.content }));
  const observations = [...pulled, ...resources];
  const extra: TurnSections = !continuation && deps.sections ? await deps.sections(agent) : { sections: [], omitted: [] };
  // Stand-ins take their calls' places among the results, so every call is followed by its answers in order.
  const fresh = inCallOrder([...admitted.value.messages, ...closing], callOrder);
  const now = deps.now();
  // The identity block is frozen at the first turn; a later agent brings its persona as a note on the user's message.
  // The app's prompt is the system message's own instruction: redacted, not neutralised (it may describe the tags).
  const identity = meta.identity ?? renderIdentity(redact(agent.systemPrompt).text, now, nonce);
  const switching = !continuation && meta.personaAgent !== null && meta.personaAgent !== agent.id;
  const personaNote = switching ? renderPersonaSwitch({ name: admit("persona", agent.name), systemPrompt: admit("persona", agent.systemPrompt) }, nonce) : undefined;
  // The user's words pass the boundary like any other channel: stored history, summaries and evidence never hold a secret.
  const typed = body.message === undefined ? null : admitText(body.message, { nonce });
  const typedRedactions = typed ? await auditRecords(typed.hits, deps.auditKey) : [];
  const contextRedactions = await Promise.all(contextHits.map(async (hit) => ({ id: hit.id, ...(await auditRecords([hit], deps.auditKey))[0]! })));
  // This message's images are always visible; earlier ones only until a compaction hides them (policy.keepImages).
  const images: ImagePart[] = (body.images ?? []).map((image_url) => ({ type: "image_url", image_url }));
  // Any conversation can receive app context (attachments, pushed resources): that block never comes and goes. The
  // summaries block arrives with the first summary, on a compaction turn, whatever windows turns name.
  const systemFor = (view: HistoryView) =>
    systemMessage(identity, { tools: agent.tools.length > 0, contexts: true, memory: agent.memory, summaries: view.summary !== null });
  // The window bounds every turn: a budget may be tighter, never larger.
  const usable = compactionLimits(policy.value)?.usable;
  const maxTokens = usable === undefined ? body.budget?.maxTokens : Math.min(body.budget?.maxTokens ?? usable, usable);
  // Without a token bound the model reads the whole view: refused before it is loaded when no request may read that much.
  const readable = maxTokens === undefined ? checkWholeView(store, history.coveredThrough()) : ok(true);
  if (!readable.ok) return readable;
  const assembleOnce = (view: HistoryView, rendered: RenderedHistory, ledger: readonly InjectedEntry[]) =>
    assembleTurn({
      turnId,
      conversationId: meta.conversationId,
      now,
      systemPrompt: systemFor(view),
      personaNote,
      history: [...rendered.history, ...fresh],
      userText: typed?.text,
      userImages: images,
      currentFrom: rendered.history.length,
      ledger,
      observations,
      sections: extra.sections,
      maxTokens,
      nonce,
      answersRequest: continuation,
      summaryFirst: view.summary !== null,
    });
  // A context whose injection the budget leaves out of view is out of the model's sight: inject it again in this
  // turn. That grows the new message and may push more history out, so repeat; each pass drops a ledger entry.
  const assemble = (view: HistoryView, rendered: RenderedHistory) => {
    let ledger = store.ledger();
    for (;;) {
      const assembled = assembleOnce(view, rendered, ledger);
      if (!assembled.ok) return assembled;
      const shown = new Set(assembled.value.historyShown.map((index) => rendered.seqs[index]));
      const inView = ledger.filter((entry) => shown.has(entry.messageSeq));
      if (inView.length === ledger.length) return assembled;
      ledger = inView;
    }
  };

  // A continuation's user message and the tool work after it are this turn's: they are read whatever the budget.
  const loadFrom = continuation ? store.lastUserSeq() : undefined;
  let view = history.view({ maxTokens, loadFrom });
  let rendered = history.render(view, now);
  let assembled = assemble(view, rendered);
  let compaction: CompactionReport | undefined;
  // A summary that covers a context's injection shows the context again on this message (a continuation shows none).
  let costs: ReturnType<typeof reinjectionCosts> | undefined;
  const reinjected = (throughSeq: number) =>
    continuation ? 0 : (costs ??= reinjectionCosts(store.ledger(), observations, new Set(rendered.seqs), nonce)).reduce((total, c) => total + (c.seq <= throughSeq ? c.tokens : 0), 0);
  const planned = assembled.ok ? history.prepare(view, rendered, assembled.value.requestedTokens - usageOf(rendered.history), policy.value, { protectFromSeq: loadFrom, reinjected }) : null;
  if (planned) {
    await history.keepClearedResults(planned);
    const draft = planned.request ? await summariseSafely(deps.summariser(policy.value), planned.request) : null;
    compaction = store.transaction(() => history.commit(planned, draft, "auto", now.toISOString(), turnId)) ?? undefined;
    view = history.view({ maxTokens, loadFrom });
    rendered = history.render(view, now);
    assembled = assemble(view, rendered);
  }
  if (!assembled.ok) return assembled;
  const assembly = assembled.value;
  // Refused before anything is stored: an answer too large to return, or a conversation with no room for this turn.
  const fits = checkTurnFits(store, [...fresh, ...(assembly.userMessage ? [assembly.userMessage] : [])], assembly.messages);
  if (!fits.ok) return fits;
  const memoryMissing = extra.memoryError ? [{ id: "memory", reason: "error" as const, detail: extra.memoryError, severity: "warning" as const }] : [];
  // History the budget could never hold was not even loaded; the evidence still says it was given up.
  const unread = view.unread.messages ? [{ id: `history:before:${view.stored[0]?.seq ?? 0}`, kind: "history" as const, priority: PRIORITY.history, tokens: view.unread.tokens }] : [];
  const envelope = {
    ...assembly.envelope,
    budget: { ...assembly.envelope.budget, truncations: [...unread, ...assembly.envelope.budget.truncations] },
    missing: [...assembly.envelope.missing, ...memoryMissing],
    selection: { ...assembly.envelope.selection, omitted: [...assembly.envelope.selection.omitted, ...extra.omitted] },
    tools: { unanswered, results: admitted.value.reports },
    ...(typedRedactions.length ? { message: { redactions: typedRedactions } } : {}),
    ...(contextRedactions.length ? { contexts: { redactions: contextRedactions } } : {}),
    history: { summaryThroughSeq: view.summary?.throughSeq ?? null, loadedFromSeq: view.stored[0]?.seq ?? null, stubs: view.stubs.size, imagesHiddenThroughSeq: view.imagesHiddenThrough ?? 0 },
    ...(compaction ? { compaction } : {}),
  };
  const result: StoredTurnResult = {
    turnId,
    conversationId: meta.conversationId,
    agent: { id: agent.id, name: agent.name, tools: agent.tools },
    usage: assembly.usage,
    missing: [...assembly.missing, ...memoryMissing],
    envelope,
  };

  const at = now.toISOString();
  store.transaction(() => {
    if (meta.agent !== agent.id || JSON.stringify([meta.agentContexts, meta.resultPolicies]) !== JSON.stringify([agent.attachedContexts, agent.resultPolicies])) {
      store.setAgent(agent.id, agent.attachedContexts, agent.resultPolicies);
    }
    if (meta.identity === null || switching) store.setIdentity(identity, agent.id);
    for (const a of added.value) store.attach(contextKey(a.ref, a.itemId), a.ref, a.itemId, at);
    const seqs = [...rendered.seqs];
    storeAdmitted(store, turnId, { ...admitted.value, messages: fresh }, at, seqs);
    recordDecisions(store, deps.approvals, openCalls, decisions.decided, turnId, at);
    deps.approvals.expireAwaiting(openCalls, at);
    const shown = assembly.historyShown.map((index) => seqs[index]!);
    // Results read as stand-ins are this turn's own mostly: their seqs are known once stored. A replay shows them so again.
    const notShown = assembly.standIns.map((s) => ({ seq: seqs[s.index]!, toolCallId: s.toolCallId, tool: s.tool, tokens: s.tokens }));
    if (notShown.length) result.envelope.tools = { ...result.envelope.tools!, notShown };
    if (assembly.userMessage) shown.push(store.appendMessage(turnId, assembly.userMessage, at));
    if (switching) store.setPersonaSeq(shown.at(-1)!);
    const lastSeq = shown.at(-1) ?? seqs.at(-1) ?? 0;
    // A budget that left out the message carrying a context's injection took the context out of view with it.
    store.forgetInjectedOutside(new Set(shown));
    for (const entry of assembly.ledger.upserts) store.recordInjection(entry, turnId, lastSeq, at);
    for (const gone of assembly.ledger.deletes) store.forget(gone.kind, gone.key);
    store.saveTurn({ turnId, requestDigest, systemPrompt: assembly.messages[0]!.content as string, userSeq: lastSeq, historyView: seqRanges(shown), compactionId: view.compactionId, result: JSON.stringify(result) }, at);
    if (typedRedactions.length) store.addEvent(turnId, "message.redacted", null, { redactions: typedRedactions }, at);
    if (contextRedactions.length) store.addEvent(turnId, "context.redacted", null, { redactions: contextRedactions }, at);
    recordTurnEvents(store, result, assembly.messages.length, at);
  });
  return ok({ ...result, messages: assembly.messages, replayed: false });
}

/** The conversation's compaction policy, with the window this turn's model has when the turn names one; checked as a whole again. */
function turnPolicy(policy: CompactionPolicy, budget: TurnBody["budget"]): Result<CompactionPolicy> {
  const parsed = withModelWindow(policy, budget ?? {});
  return parsed.success ? ok(parsed.data) : fail("invalid-request", `budget: ${parsed.error.issues[0]!.message}`, parsed.error.issues.map((i) => ({ path: `budget.${i.path.join(".")}`, message: i.message })));
}

/**
 * The answer stored for `prior`: its result, and exactly what its model input held (summary, stubs and stand-ins as
 * they were). An empty stored view is a record written before views were stored (migration 0002's default), which
 * read the whole history through its message, unless its usage says it read no stored message at all.
 */
function replay(deps: TurnDeps, prior: TurnRecord): TurnResult {
  const stored = JSON.parse(prior.result) as StoredTurnResult;
  const legacy = prior.historyView.length === 0 && stored.usage.history + stored.usage.message > 0;
  const ranges = legacy ? [[1, prior.userSeq] as [number, number]] : prior.historyView;
  const overlay = deps.history.overlayAsOf(prior.compactionId);
  const read = ranges.flatMap(([from, to]) => deps.store.messages(to, Math.max(from, 1)));
  // The turn's own message kept all its images; the history before it shows those after the image boundary of the
  // compaction the turn was built on (a turn stored before boundaries: its `earlierImages`).
  const own = stored.usage.message > 0 ? read.pop()! : null;
  const view = { ...overlay, summary: ranges[0]?.[0] === 0 ? overlay.summary : null, stored: read };
  const { history, seqs } = deps.history.render(view, new Date(stored.envelope.createdAt), stored.envelope.history?.earlierImages);
  const notShown = new Map((stored.envelope.tools?.notShown ?? []).map((n) => [n.seq, n]));
  const shown = history.map((m, i): ChatMessage => {
    const standIn = notShown.get(seqs[i]!);
    return standIn && m.role === "tool" ? { role: "tool", tool_call_id: m.tool_call_id, content: renderNotShown(standIn.tool, standIn.tokens, deps.meta.nonce) } : m;
  });
  return { ...stored, messages: [{ role: "system", content: prior.systemPrompt }, ...shown, ...(own ? [own.message] : [])], replayed: true };
}

/** Ascending seqs as [from, to] runs. */
function seqRanges(seqs: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const seq of seqs) {
    const last = ranges.at(-1);
    if (last && seq === last[1] + 1) last[1] = seq;
    else ranges.push([seq, seq]);
  }
  return ranges;
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

function recordTurnEvents(store: ConversationStore, result: StoredTurnResult, messageCount: number, at: string): void {
  const { envelope } = result;
  for (const i of envelope.injection) {
    const type = i.marker === "removed" ? "context.removed" : "context.injection.applied";
    store.addEvent(result.turnId, type, i.id, { kind: i.kind, marker: i.marker }, at);
  }
  for (const m of result.missing) store.addEvent(result.turnId, "context.missing", m.id, { reason: m.reason, detail: m.detail }, at);
  for (const c of envelope.tools?.unanswered ?? []) store.addEvent(result.turnId, "tool.call.unanswered", c.id, { tool: c.name, ...(c.awaitingApproval ? { awaitingApproval: true } : {}) }, at);
  for (const t of envelope.budget.truncations) store.addEvent(result.turnId, "context.truncated", t.id, { kind: t.kind, priority: t.priority, tokens: t.tokens }, at);
  store.addEvent(result.turnId, "turn.assembled", result.agent.id, { usage: result.usage }, at);
  // The contract's name for what a request now includes: message and token counts, and the contexts injected.
  const sources = envelope.injection.filter((i) => i.marker !== "removed").map((i) => i.id);
  store.addEvent(result.turnId, "context:include", null, { messageCount, tokens: result.usage.total, sources }, at);
}
