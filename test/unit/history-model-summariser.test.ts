import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { countTokens } from "../../src/core/tokens";
import { modelSummariser, TRANSCRIPT_MAX_CHARS } from "../../src/history/model-summariser";
import { chooseSummariser, summariseSafely } from "../../src/history/summarise";
import type { SummaryInputMessage, SummaryRequest } from "../../src/history/summary";
import { startRecordingServer, type RecordingServer } from "./support/recording-server";

/** A shape the redactor does not know, so only the summariser's own scrub keeps it out of errors. */
const API_KEY = "gateway-key-for-tests-42";
const GITHUB_TOKEN = `ghp_${"aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF3hJ5"}`;

/** A stand-in chat completions endpoint. */
let endpoint: RecordingServer;
let url: string;

beforeAll(async () => {
  endpoint = await startRecordingServer();
  url = `${endpoint.origin}/v1/chat/completions`;
});

afterAll(() => endpoint.close());

beforeEach(() => {
  endpoint.reset({ status: 200 });
  answerWith("Summary of the conversation.");
});

function answerWith(content: unknown) {
  answer({ status: 200, body: JSON.stringify({ id: "chatcmpl-1", choices: [{ index: 0, message: { role: "assistant", content } }] }) });
}

function answer(reply: Omit<RecordingServer["reply"], "type">) {
  endpoint.reply = { type: "application/json", ...reply };
}

function summariser(timeoutMs?: number) {
  return modelSummariser({ url, apiKey: API_KEY, model: "gpt-test-mini", ...(timeoutMs ? { timeoutMs } : {}) });
}

/** The draft of a call that succeeds. */
async function summarise(r: SummaryRequest, s = summariser()) {
  const result = await s.summarise(r);
  if (!result.ok) throw new Error(`expected a draft, got: ${result.problem}`);
  return result.value;
}

/** Why a call gave no draft. */
async function failure(s = summariser()): Promise<string> {
  const result = await s.summarise(request());
  expect(result.ok).toBe(false);
  return result.ok ? "" : result.problem;
}

function message(seq: number, role: SummaryInputMessage["role"], content: string, extra: Partial<SummaryInputMessage> = {}): SummaryInputMessage {
  return { seq, role, content, createdAt: "2026-11-23T09:00:00Z", ...extra };
}

const conversation: SummaryInputMessage[] = [
  message(7, "user", 'Rename the report to "Q3 — final". No, I said Q3, not Q4.'),
  message(8, "assistant", "Looking for the file.", { toolCalls: [{ name: "files_search", arguments: '{"query":"Q3 report"}' }] }),
  message(9, "tool", "reports/q3-final.pdf", { toolName: "files_search" }),
];

function request(overrides: Partial<SummaryRequest> = {}): SummaryRequest {
  return { previous: null, messages: conversation, maxTokens: 300, ...overrides };
}

function sentBody(): { model: string; temperature: number; max_tokens: number; messages: { role: string; content: string }[] } {
  expect(endpoint.seen).toHaveLength(1);
  return JSON.parse(endpoint.seen[0]!.body);
}

describe("modelSummariser requests", () => {
  it("posts the transcript with seqs, roles and tool calls, and the previous summary, with the bearer key", async () => {
    const draft = await summarise(request({ previous: { text: "Earlier: the user owns the reports folder.", summariser: "digest", state: null } }));

    expect(draft).toEqual({ text: "Summary of the conversation.", state: null, loss: ["summarised by model gpt-test-mini; exact wording outside quotes may be paraphrased"] });
    expect(summariser().name).toBe("model:gpt-test-mini");
    const seenRequest = endpoint.seen[0]!;
    expect([seenRequest.method, seenRequest.url, seenRequest.headers.authorization, seenRequest.headers["content-type"]]).toEqual([
      "POST",
      "/v1/chat/completions",
      `Bearer ${API_KEY}`,
      "application/json",
    ]);
    const body = sentBody();
    expect([body.model, body.temperature, body.max_tokens, body.messages.map((m) => m.role)]).toEqual(["gpt-test-mini", 0, 300, ["system", "user"]]);
    const [system, user] = body.messages.map((m) => m.content);
    expect(system).toContain("never follow");
    expect(system).toContain("replaces it");
    expect(system).toContain("under 300 tokens");
    expect(user).toContain("Previous summary (your answer replaces it):\nEarlier: the user owns the reports folder.");
    expect(user).toContain(
      [
        '#7 user: Rename the report to "Q3 — final". No, I said Q3, not Q4.',
        '#8 assistant: Looking for the file.\n(calls files_search {"query":"Q3 report"})',
        "#9 tool (tool files_search): reports/q3-final.pdf",
      ].join("\n\n"),
    );
  });

  it("labels a denied call as the user's decision, not as tool output", async () => {
    const at = "2026-11-01T00:00:00Z";
    await summarise(
      request({
        messages: [
          { seq: 1, role: "assistant", content: "", toolCalls: [{ name: "delete_file", arguments: '{"path":"drafts/"}' }, { name: "search", arguments: "{}" }], createdAt: at },
          { seq: 2, role: "tool", toolName: "delete_file", content: "[not run: the user denied this tool call] Their reason: keep them.", denied: { reason: "keep them." }, createdAt: at },
          { seq: 3, role: "tool", toolName: "search", content: "[not run: the user denied this tool call]", createdAt: at },
        ],
      }),
    );
    const transcript = sentBody().messages[1]!.content;
    expect(transcript).toContain("#2 user (denied running delete_file): keep them.");
    expect(transcript).toContain("#3 tool (tool search): [not run: the user denied this tool call]");
  });

  it("sends no previous-summary section when there is none", async () => {
    await summarise(request());
    expect(sentBody().messages[1]?.content).toMatch(/^Transcript:\n#7 user: /);
  });

  it("redacts a secret in content, tool arguments and the previous summary before it leaves", async () => {
    await summarise(
      request({
        previous: { text: `The deploy token was ${GITHUB_TOKEN}.`, summariser: "digest", state: null },
        messages: [
          message(1, "user", `use token ${GITHUB_TOKEN} for the push`),
          message(2, "assistant", "", { toolCalls: [{ name: "git_push", arguments: JSON.stringify({ token: GITHUB_TOKEN }) }] }),
        ],
      }),
    );
    const raw = endpoint.seen[0]!.body;
    expect(raw).not.toContain(GITHUB_TOKEN.slice(4));
    expect(raw.match(/\[REDACTED:github-token\]/g)).toHaveLength(3);
  });

  it("cuts the middles of over-long tool results first, keeping every message, and says so", async () => {
    const log = `FIRST LINE\n${"x".repeat(TRANSCRIPT_MAX_CHARS)}\nLAST LINE`;
    const draft = await summarise(request({ messages: [message(1, "user", "why did the build fail?"), message(2, "tool", log, { toolName: "ci_log" }), message(3, "user", "and fix it")] }));

    const user = sentBody().messages[1]?.content ?? "";
    expect(user.length).toBeLessThanOrEqual(TRANSCRIPT_MAX_CHARS + 100);
    expect(user).toContain("#1 user: why did the build fail?");
    expect(user).toMatch(/#2 tool \(tool ci_log\): FIRST LINE\nx+\n\[… \d+ characters left out …\]\nx+\nLAST LINE\n\n#3 user: and fix it$/);
    expect(draft.loss).toContain("the model was sent the transcript with the middles of 1 long tool results left out");
  });
});

describe("modelSummariser answers", () => {
  it("cuts an over-long answer at a line boundary to maxTokens, with a loss line", async () => {
    // Lines long enough that the token cut lands mid-line, well before the next line break.
    const line = (i: number) => `- decision ${i}: keep the reports folder layout exactly as the user agreed on Monday, with the archive moved under reports/archive and the drafts left where they are`;
    const answer = Array.from({ length: 5 }, (_, i) => line(i + 1)).join("\n");
    answerWith(answer);
    const draft = await summarise(request({ maxTokens: 50 }));

    expect(countTokens(draft.text)).toBeLessThanOrEqual(50);
    expect(draft.text.length).toBeGreaterThan(0);
    expect(answer.startsWith(draft.text)).toBe(true);
    expect(answer[draft.text.length]).toBe("\n");
    expect(draft.loss).toContain("the model's summary ran over 50 tokens; its last lines were cut");
  });

  it("rejects a non-2xx answer with its status and a short excerpt, never the key it echoes", async () => {
    answer({ status: 500, body: JSON.stringify({ error: { message: `upstream overloaded for key ${API_KEY}`, padding: "y".repeat(5000) } }) });
    const text = await failure();
    expect(text).toMatch(/HTTP 500: .*upstream overloaded/);
    expect(text).not.toContain(API_KEY);
    expect(text.length).toBeLessThan(300);
  });

  it.each([
    ["a body that is not JSON", "<html>Bad gateway</html>", /HTTP 200 with a body that is not JSON/],
    ["no choices", JSON.stringify({ choices: [] }), /HTTP 200 without a summary \(choices/],
    ["a null content", JSON.stringify({ choices: [{ message: { role: "assistant", content: null } }] }), /HTTP 200 without a summary \(choices\.0\.message\.content/],
    ["an empty content", JSON.stringify({ choices: [{ message: { content: "  \n" } }] }), /HTTP 200 without a summary \(choices\.0\.message\.content/],
  ])("rejects an answer with %s", async (_, body, expected) => {
    answer({ status: 200, body });
    const error = await failure();
    expect(error).toMatch(expected);
    expect(error).not.toContain(API_KEY);
  });

  it("rejects when the endpoint answers after timeoutMs", async () => {
    answer({ status: 200, body: JSON.stringify({ choices: [{ message: { content: "late" } }] }), delayMs: 2000 });
    const started = Date.now();
    const error = await failure(summariser(100));

    expect(Date.now() - started).toBeLessThan(1500);
    expect(error).toBe("model summariser: no answer within 100 ms");
  });
});

describe("chooseSummariser", () => {
  it("has the digest summarise when the model gives no summary, the loss saying why, and never fails the compaction", async () => {
    answer({ status: 503, body: JSON.stringify({ error: { message: "down for maintenance" } }) });
    const chosen = chooseSummariser("model", { url, apiKey: API_KEY, model: "gpt-test-mini" });
    expect(chosen.name).toBe("model:gpt-test-mini");
    const draft = await summariseSafely(chosen, request());
    expect(draft.summariser).toBe("digest");
    expect(draft.loss[0]).toMatch(/^model:gpt-test-mini failed \(model summariser: the endpoint answered HTTP 503: .*down for maintenance.*\); the digest summarised instead$/);
    expect(draft.text).toContain("Q3");
    // A working endpoint writes it, under the model's name.
    answerWith("Summary of the conversation.");
    expect(await summariseSafely(chosen, request())).toMatchObject({ text: "Summary of the conversation.", summariser: "model:gpt-test-mini" });
    expect(chooseSummariser("model", null).name).toBe("digest");
  });
});
