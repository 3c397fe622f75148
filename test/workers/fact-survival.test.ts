/**
 * Issue 10 through the public API, in workerd: a session from test/fixtures/fact-corpus.ts played turn by turn (a
 * turn with the user's `message`, the assistant's tool calls appended with `POST …/messages`, a continuation turn
 * with `toolResults`, the reply appended), with a compaction policy of 4k, 8k and 16k windows (1,024 tokens
 * reserved). The last turn's `messages`, what the model reads, is judged as the unit test judges its simulation:
 * every correction and no old value alone in each session, and the share readable over the three sessions' facts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { textOf } from "../../src/protocol/messages";
import type { CompactionStatus } from "../../src/protocol/history";
import type { TurnResult } from "../../src/protocol/frontend";
import { FACT_KINDS, SURVIVAL, WINDOWS, judge, mergeVerdicts, session, type Verdict, type Window } from "../fixtures/fact-corpus";
import { DEFAULT_PROPERTY_SEED } from "../unit/support/property-seed";
import { freshIdentity, Frontend } from "./support/runtime";
import { TestApp } from "./support/test-app";

/** The run's seed (PROPERTY_SEED, as the property tests): fixed unless the run asks for another. */
const SEED = Number((env as unknown as { PROPERTY_SEED?: string }).PROPERTY_SEED ?? DEFAULT_PROPERTY_SEED);

async function setup(contextWindow: Window) {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "notes", {
    "editor-state": { name: "Editor State", current: () => ({ content: "Open note: planning (cursor at line 1)", title: "Editor State" }) },
  });
  const agent = await app.createAgent("assistant", ["notes:editor-state"], "You are a helpful assistant for a product team.");
  const frontend = await Frontend.for(id);
  const { id: conversation } = await frontend.json<{ id: string }>("POST", "/v1/conversations", { compaction: { contextWindow, outputReserve: 1_024 } });
  return { app, agent, frontend, conversation, path: `/v1/conversations/${conversation}` };
}

describe("the user's facts survive compaction through the API (issue 10)", () => {
  /** Each window's verdict on its last turn; the share readable is taken over the three sessions' facts together. */
  const verdicts = new Map<Window, Verdict>();

  for (const window of WINDOWS) {
    it(`in a ${window}-token window: ≥ ${SURVIVAL.compactionsPerSession} summaries, every correction readable on the last turn, no old value alone`, async () => {
      const c = await setup(window);
      const s = session(SEED + window, SURVIVAL.session[window]);
      let last: TurnResult | null = null;
      let summaries = 0;
      const took = (turn: TurnResult) => {
        if (turn.envelope.compaction?.summary) summaries++;
        last = turn;
      };
      for (const [i, t] of s.turns.entries()) {
        took(await c.frontend.turn(c.conversation, { agent: c.agent, message: t.user }));
        if (t.tools) {
          await c.frontend.json("POST", `${c.path}/messages`, { messages: [{ role: "assistant", content: null, tool_calls: t.tools.calls }] });
          took(await c.frontend.turn(c.conversation, { agent: c.agent, toolResults: t.tools.results }));
        }
        if (i < s.turns.length - 1) await c.frontend.json("POST", `${c.path}/messages`, { messages: [{ role: "assistant", content: t.reply }] });
      }
      c.app.close();

      const status = await c.frontend.json<CompactionStatus>("GET", `${c.path}/compaction`);
      expect(status.latest?.id ?? 0, "compactions").toBeGreaterThanOrEqual(SURVIVAL.compactionsPerSession);
      expect(summaries, "turns that wrote a summary").toBeGreaterThanOrEqual(SURVIVAL.compactionsPerSession);
      expect(status.summary, "the summary in effect").not.toBeNull();

      const final = last! as TurnResult;
      const v = judge(final.messages.map(textOf), s.facts);
      verdicts.set(window, v);
      const message = describeVerdict(v, `window ${window}, session seed ${s.seed}, ${summaries} summaries`);
      expect(v.byKind.correction.readable, message).toBeGreaterThanOrEqual(Math.ceil(SURVIVAL.corrections * v.byKind.correction.facts));
      expect(v.supersededAlone.length, message).toBeLessThanOrEqual(SURVIVAL.supersededAlone);
    }, 120_000);
  }

  it(`keeps ≥ ${SURVIVAL.overall * 100} % of the facts planted in the three sessions readable on their last turns`, () => {
    expect([...verdicts.keys()], "a window's session did not finish").toEqual([...WINDOWS]);
    const v = mergeVerdicts([...verdicts.values()]);
    expect(v.readable / v.facts, describeVerdict(v, `windows ${WINDOWS.join(", ")}`)).toBeGreaterThanOrEqual(SURVIVAL.overall);
  });
});

function describeVerdict(v: Verdict, what: string): string {
  return [
    `${what}: ${v.readable}/${v.facts} readable (${FACT_KINDS.map((k) => `${k} ${v.byKind[k].readable}/${v.byKind[k].facts}`).join(", ")})`,
    ...v.lost.map((f) => `  lost ${f.id} (${f.template}) ${JSON.stringify(f.statement)} → ${JSON.stringify(f.probes)}`),
    ...v.supersededAlone.map((f) => `  old value alone ${f.id}: ${JSON.stringify(f.original)} → ${JSON.stringify(f.statement)}`),
  ].join("\n");
}
