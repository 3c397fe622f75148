/**
 * `contexts/currentMany` (docs/protocol.md): an app that declares the capability has its providers' current state
 * asked in one request a turn, and each provider's answer read as `contexts/current` alone would be; an app that
 * does not is asked one request a provider, as before.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { providerDeadlineMs } from "../../src/platform/config";
import { ErrorCode } from "../../src/protocol/jsonrpc";
import { freshIdentity, Frontend, reminderOf } from "./support/runtime";
import { TestApp } from "./support/test-app";

type Asked = { requests: { provider: string; conversationId: string }[]; deadlineMs: number };
const PROVIDERS = { editor: { name: "Editor", current: () => ({ content: "alone", title: "Editor" }) }, calendar: { name: "Calendar", current: () => ({ content: "alone", title: "Calendar" }) }, browser: { name: "Browser", current: () => ({ content: "alone", title: "Browser" }) } };

async function setup(answer: (asked: Asked) => unknown) {
  const id = freshIdentity();
  const app = await TestApp.connect(id, "desk", PROVIDERS, { currentMany: (params) => answer(params as unknown as Asked) });
  const agent = await app.createAgent("assistant", ["desk:editor", "desk:calendar", "desk:browser"]);
  const frontend = await Frontend.for(id);
  const conversation = await frontend.conversation();
  return { app, agent, frontend, conversation };
}

describe("contexts/currentMany", () => {
  it("asks an app's providers in one request, under the providers' deadline, and reads each answer in order", async () => {
    const { app, agent, frontend, conversation } = await setup(({ requests }) => ({ answers: requests.map((r) => ({ result: { content: `${r.provider} together`, title: r.provider } })) }));
    const turn = await frontend.turn(conversation, { agent, message: "hello" });
    expect(app.calls.map((c) => c.method)).toEqual(["contexts/currentMany"]);
    const params = app.calls[0]!.params as unknown as Asked;
    expect(params.requests).toEqual(["editor", "calendar", "browser"].map((provider) => ({ provider, conversationId: conversation })));
    expect(params.deadlineMs).toBe(providerDeadlineMs(env));
    for (const p of ["editor", "calendar", "browser"]) expect(reminderOf(turn)).toContain(`${p} together`);
    expect(turn.missing).toEqual([]);
  });

  it("reads an error, a timeout, nothing current and invalid data per provider; an answer too large to share a frame is asked alone", async () => {
    const { app, agent, frontend, conversation } = await setup(() => ({
      answers: [{ error: { code: ErrorCode.TooLarge, message: "ask it alone" } }, { error: { code: ErrorCode.Timeout, message: "no answer within 1900 ms" } }, { result: { content: 42 } }],
    }));
    const turn = await frontend.turn(conversation, { agent, message: "hello" });
    expect(app.calls.map((c) => c.method)).toEqual(["contexts/currentMany", "contexts/current"]);
    expect(app.calls[1]!.params).toEqual({ provider: "editor", conversationId: conversation });
    expect(reminderOf(turn)).toContain("alone");
    expect(turn.missing).toEqual([expect.objectContaining({ id: "desk:calendar", reason: "timeout" }), expect.objectContaining({ id: "desk:browser", reason: "invalid" })]);

    app.calls.length = 0;
    const errors = await setup(() => ({ answers: [{ result: null }, { error: { code: ErrorCode.InternalError, message: "disk on fire" } }, { result: { content: "ok", title: "Browser" } }] }));
    const second = await errors.frontend.turn(errors.conversation, { agent: errors.agent, message: "hello" });
    expect(second.missing).toEqual([expect.objectContaining({ id: "desk:calendar", reason: "error" })]);
    expect(reminderOf(second)).toContain("[Context: Browser]");
  });

  it("reads a malformed entry as that provider's answer alone", async () => {
    const { agent, frontend, conversation } = await setup(() => ({ answers: [{ result: { content: "fine", title: "Editor" } }, { result: null, extra: true }, { error: { code: "x" } }] }));
    const turn = await frontend.turn(conversation, { agent, message: "hello" });
    expect(turn.missing.map((m) => [m.id, m.reason])).toEqual([["desk:calendar", "invalid"], ["desk:browser", "invalid"]]);
    expect(reminderOf(turn)).toContain("[Context: Editor]");
  });

  it("reads an answer that is not one per provider as invalid for each, and never fails the turn", async () => {
    const { agent, frontend, conversation } = await setup(() => ({ answers: [{ result: { content: "only one" } }] }));
    const turn = await frontend.turn(conversation, { agent, message: "hello" });
    expect(turn.missing.map((m) => [m.id, m.reason])).toEqual([["desk:editor", "invalid"], ["desk:calendar", "invalid"], ["desk:browser", "invalid"]]);
  });

  it("asks an app without the capability one request a provider, as before", async () => {
    const id = freshIdentity();
    const app = await TestApp.connect(id, "desk", PROVIDERS);
    const agent = await app.createAgent("assistant", ["desk:editor", "desk:calendar", "desk:browser"]);
    const frontend = await Frontend.for(id);
    await frontend.turn(await frontend.conversation(), { agent, message: "hello" });
    expect(app.calls.map((c) => c.method)).toEqual(["contexts/current", "contexts/current", "contexts/current"]);
  });
});
