/**
 * `npx tsx bench/paired.ts`: the figures a change is paired on (issue 21's four), on a fresh local runtime each run:
 * turns with three providers answering at once (TURNS, 500 by default: p50 and p99, round trip and inside the Worker),
 * `GET …/context` on a 10,000-message conversation (inside the Worker), and a 1 MB tool output through the
 * tool-result path (MB/s inside the Worker). WHAT=turns,context,tool picks some; NOTIFIES=1 adds turns whose providers
 * notify their changes (`notifies: true`: the editor changes every turn, the other two answers are kept). Small enough to copy into an export of
 * another commit and run in turn with this one (before src/http/, `mintToken` was in src/api/credentials.ts):
 *   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   cp bench/paired.ts bench/bench-runtime.ts /tmp/base/bench/ && (cd /tmp/base && npx tsx bench/paired.ts)
 */
import { benchRuntime } from "./bench-runtime";
import { benchLongConversation } from "./history";
import { benchToolSession } from "./tool-session";
import { benchTurns, printTurnBench } from "./turns";

const what = new Set((process.env.WHAT ?? "turns,context,tool").split(","));
const runtime = await benchRuntime();
try {
  const { appToken, ...run } = runtime;
  if (what.has("turns")) {
    const turns = Number(process.env.TURNS ?? 500);
    const perConversation = 25;
    const conversations = Math.ceil(turns / perConversation);
    printTurnBench(
      `Turns with three providers answering at once (${conversations} conversations × ${perConversation} turns)`,
      await benchTurns({ ...run, appToken: await appToken("bench"), providerDelaysMs: [0, 0, 0], conversations, turnsPerConversation: perConversation }),
    );
    if (process.env.NOTIFIES === "1") {
      printTurnBench(
        `The same, the providers notifying their changes: the editor changes every turn, the other two are kept`,
        await benchTurns({ ...run, appToken: await appToken("bench"), providerDelaysMs: [0, 0, 0], conversations, turnsPerConversation: perConversation, notifies: true }),
      );
    }
  }
  if (what.has("context")) {
    const long = await benchLongConversation({ ...run, appToken: await appToken("history") });
    console.log(`GET …/context on ${long.messages} messages: inside the Worker p50 ${long.request.serverP50} ms (round trip p50 ${long.request.p50.toFixed(1)} ms)`);
  }
  if (what.has("tool")) {
    const tool = await benchToolSession({ ...run, appToken: await appToken("tools") });
    console.log(`a 1 MB tool output through the tool-result path inside the Worker: ${tool.redactMbPerSecond.toFixed(1)} MB/s`);
  }
} finally {
  await runtime.stop();
}
