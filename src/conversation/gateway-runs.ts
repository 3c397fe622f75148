/**
 * The model gateway's side of a conversation (docs/gateway.md): its cursor in the client's copy, the run in progress
 * (a newer request interrupts it, and its later writes are refused) and the upstream's usage (the output hooks' check of
 * each answer: output-review.ts). The Conversation object serves these inside its queue; src/gateway/ calls them over RPC.
 */
import { fail, ok, type Result } from "../core/problem";
import type { TurnResult } from "../protocol/frontend";
import type { TurnBody } from "../protocol/http";
import type { GatewayCursor, GatewayStore, ModelUsage } from "./gateway-store";
import type { ConversationScope } from "./scope";
import { takeTurn } from "./turn/index";

/** What the gateway's side reaches: the conversation's database and row, and the user's hub, which indexes where the
 * cursor is so a resent history finds the conversation (src/hub/gateway-heads.ts). */
export type GatewayScope = Pick<ConversationScope, "db" | "apps">;

/** The cursor moved: the hub's index follows (a cursor without a chain, from before chains were kept, cannot be found by one). */
async function headMoved(scope: GatewayScope, cursor: GatewayCursor, at: string): Promise<void> {
  const meta = scope.db.conversation.get();
  if (cursor.chain === null || !meta?.agent) return;
  // Best effort, after the turn is stored: a hub that fails here costs a header-less client its lookup (it is told
  // 409 history_mismatch and can send X-Conversation-Id), never the turn the conversation already took.
  try {
    await scope.apps.gatewayHeadMoved({ conversationId: meta.conversationId, agent: meta.agent, chain: cursor.chain, consumed: cursor.consumed, at });
  } catch (error) {
    console.warn(`gateway: the history index of conversation ${meta.conversationId} was not moved: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A gateway run's writes go on only while it is the run in progress (none given: not a gateway run's). */
export function runLive(gateway: GatewayStore, run: string | undefined): Result<true> {
  if (run === undefined || gateway.openRun()?.runId === run) return ok(true);
  return fail("conflict", "a newer request on this conversation interrupted this one: the rest of its answer is not stored");
}

/**
 * The gateway's turn, inside the queue: the client's new part taken (`takeTurn`) and the cursor moved past it, only if
 * the cursor is still where the gateway read it. Two requests that read the same cursor cannot both take the same
 * message: the second is refused (409), as a retry of it would continue the turn the first took.
 */
export async function takeGatewayTurn(scope: ConversationScope, body: TurnBody, cursor: { expected: GatewayCursor | null; next: GatewayCursor }, run: string): Promise<Result<TurnResult>> {
  const { gateway, events } = scope.db;
  if (JSON.stringify(gateway.cursor()) !== JSON.stringify(cursor.expected)) {
    return fail("conflict", "another request on this conversation moved it on meanwhile: send one request at a time per conversation");
  }
  // A run still in progress (streaming, or running tools) is interrupted: its later writes are refused, and a new
  // user message is told what it cut off.
  const prior = gateway.openRun();
  const turn = await takeTurn(scope, body, prior && body.message !== undefined ? { interruptedRun: prior } : {});
  if (!turn.ok) return turn;
  const at = new Date().toISOString();
  gateway.setCursor(cursor.next, at, { runId: run, turnId: turn.value.turnId });
  if (prior) events.add(turn.value.turnId, "gateway.run.interrupted", prior.turnId, { runId: prior.runId }, at);
  await headMoved(scope, cursor.next, at);
  return turn;
}

/** What the gateway records after a step; `steps`, once its request ends: every step's turn, in order. */
export interface GatewayRecord {
  cursor?: GatewayCursor;
  usage?: ModelUsage[];
  run?: string;
  end?: boolean;
  steps?: string[];
}

/**
 * The gateway's bookkeeping after a step: its cursor moves, and the upstream's real usage lands as `model.usage`
 * events on the turns whose input each call read (the same event a frontend's own loop reports with its reply). At
 * the request's end, `gateway.steps` on its first turn names them all.
 */
export async function recordGatewayStep(scope: GatewayScope, record: GatewayRecord): Promise<Result<{ lastSeq: number }>> {
  const { db: store } = scope;
  const { gateway } = store;
  const at = new Date().toISOString();
  const lastSeq = store.messages.lastSeq();
  // An interrupted run's usage is still recorded (it was paid for); its cursor is not the conversation's any more.
  const live = runLive(gateway, record.run).ok;
  store.transaction(() => {
    if (record.cursor && live) gateway.setCursor(record.cursor, at);
    if (record.run && live && (record.cursor || record.end)) gateway.endRun(record.run);
    for (const { turnId, step, ...u } of record.usage ?? []) {
      store.events.add(turnId, "model.usage", u.model, { ...u, lastSeq, source: "gateway", step }, at);
    }
    // On step 1's turn, which X-Turn-Id names: a streamed answer's headers left before the other steps were known.
    const [first] = record.steps ?? [];
    if (first) store.events.add(first, "gateway.steps", first, { turnIds: record.steps }, at);
  });
  if (record.cursor && live) await headMoved(scope, record.cursor, at);
  return ok({ lastSeq });
}
