/**
 * Context tokens the model reads over a scripted 30-turn session in which three
 * contexts change on about a fifth of the turns, against re-injecting every
 * context every turn (what a runtime without a ledger does).
 */
import type { ContextClient } from "../src/sdk";
import { ContextApp } from "../src/sdk";
import { renderChange, renderReminder } from "../src/core/reminder";
import { countTokens } from "../src/core/tokens";
import { seededRandom } from "../test/fixtures/seeded-random";

export async function benchInjectedTokens(o: { url: string; appToken: string; client: ContextClient; turns: number }) {
  const random = seededRandom(42);
  const paragraph = (seed: string, words: number) => Array.from({ length: words }, (_, i) => `${seed}${(i * 7919) % 997}`).join(" ");
  const state: Record<string, { title: string; content: string; revision: number }> = {
    editor: { title: "Editor State", content: paragraph("cursor", 120), revision: 0 },
    notes: { title: "Notes overview", content: paragraph("note", 300), revision: 0 },
    calendar: { title: "Today", content: paragraph("meeting", 200), revision: 0 },
  };
  const app = new ContextApp({
    url: o.url,
    token: o.appToken,
    app: { name: "tokens", version: "1.0.0" },
    contexts: Object.keys(state).map((id) => ({ id, name: id, description: id, getCurrent: async () => ({ title: state[id]!.title, content: state[id]!.content }) })),
  });
  await app.connect();
  const { agentId } = await app.createAgent({ agentId: "a", name: "A", systemPrompt: "x", attachedContexts: Object.keys(state).map((id) => `tokens:${id}`) });
  const { id } = await o.client.createConversation({ agent: agentId });

  let injected = 0;
  let naive = 0;
  let changedTurns = 0;
  for (let t = 0; t < o.turns; t++) {
    if (t > 0 && random() < 0.2) {
      changedTurns++;
      const ids = Object.keys(state).filter(() => random() < 0.5);
      for (const key of ids.length ? ids : [Object.keys(state)[Math.floor(random() * 3)]!]) {
        const s = state[key]!;
        s.revision++;
        s.content = `${paragraph(`${key}${s.revision}`, 20)} ${s.content.slice(0, s.content.length - 100)}`;
      }
    }
    const turn = await o.client.turn(id, { agent: agentId, message: `turn ${t}` });
    injected += turn.usage.contexts;
    naive += countTokens(renderReminder(Object.entries(state).map(([key, s]) => renderChange({ key, kind: "context", change: "first", title: s.title, version: "", content: s.content }))));
  }
  await app.close();
  return { injected, naive, changedTurns, turns: o.turns };
}
