/**
 * `npm run fake-model`: the examples' fake model (examples/fake-model.ts) on a fixed port, for a runtime started with
 * `USE_FAKE_MODEL=1 npm run dev`, so the gateway answers with no network and no key. FAKE_MODEL_PORT moves it
 * (default 8788; `npm run dev` reads the same variable).
 */
import { fakeModel } from "../examples/fake-model";
import { startFakeOpenAI } from "../test/e2e/fake-openai";
import { fakeModelPort } from "./local-runtime";

const port = fakeModelPort();
const fake = await startFakeOpenAI(fakeModel, { port }).catch((error: NodeJS.ErrnoException) => {
  console.error(error.code === "EADDRINUSE" ? `port ${port} is taken: is a fake model running already? (FAKE_MODEL_PORT moves it)` : String(error));
  process.exit(1);
});
console.log(`fake model (OpenAI-compatible) at ${fake.url}
  start the runtime against it:  USE_FAKE_MODEL=1 npm run dev
  then: POST /v1/chat/completions with "model": "notes:assistant" (npm run example:notes keeps that agent connected)
  every request it answers is printed here; Ctrl-C stops it`);
let seen = 0;
setInterval(() => {
  for (const request of fake.requests.slice(seen)) console.log(`← ${request.messages.length} messages${request.stream ? ", streamed" : ""}, tools: ${(request.tools ?? []).length}`);
  seen = fake.requests.length;
}, 250);
process.once("SIGINT", () => void fake.close().finally(() => process.exit(0)));
