import { corpusA } from "./test/fixtures/history-corpus-a";
import { storedMessages } from "./test/fixtures/outside-corpora";
import { memoryConversation } from "./test/unit/support/node-sql";
for (const id of ["a-task-031", "a-quote-031", "a-correction-043", "a-task-003"]) {
  const s = corpusA(16384).find((s) => s.facts.some((f) => f.id === id))!;
  const f = s.facts.find((f) => f.id === id)!;
  const c = memoryConversation();
  storedMessages(s).forEach((m) => c.append(m));
  console.log("\n==", id, f.query, "|", f.statement);
  for (const h of c.search.search(f.query, 3).hits) console.log("  #", h.seq, h.role, h.excerpt.slice(0, 200));
}
