/**
 * Calls waiting for an app's answer share one deadline timer: each still times out at its own deadline, an answered
 * call never does, and with nothing waiting no timer is left to keep the object awake.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AppCallError, PendingCalls } from "../../src/hub/pending-calls";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

interface Watched {
  outcome: unknown;
}

/** What became of a call so far: its result, the reason it failed, or "waiting". */
function watch(answer: Promise<unknown>): Watched {
  const seen: Watched = { outcome: "waiting" };
  answer.then(
    (result) => (seen.outcome = { result }),
    (error: AppCallError) => (seen.outcome = { reason: error.reason, message: error.message }),
  );
  return seen;
}

describe("PendingCalls", () => {
  it("times each call out at its own deadline, with one timer for a batch", async () => {
    const pending = new PendingCalls();
    const batch = [pending.start("s1", 1_000), pending.start("s1", 1_000), pending.start("s1", 1_000)];
    expect(vi.getTimerCount()).toBe(1);
    const later = pending.start("s1", 2_500);
    const sooner = pending.start("s2", 400);
    const [a, b, c] = batch.map((call) => watch(call.answer)) as [Watched, Watched, Watched];
    const [l, s] = [watch(later.answer), watch(sooner.answer)];
    expect(pending.settle(batch[1]!.id, "s1", { result: "answered" })).toBe(true);

    await vi.advanceTimersByTimeAsync(399);
    expect(s.outcome).toBe("waiting");
    await vi.advanceTimersByTimeAsync(1);
    expect(s.outcome).toEqual({ reason: "timeout", message: "no answer within 400 ms" });
    await vi.advanceTimersByTimeAsync(599);
    expect([a.outcome, b.outcome, c.outcome]).toEqual(["waiting", { result: "answered" }, "waiting"]);
    await vi.advanceTimersByTimeAsync(1);
    expect([a.outcome, c.outcome]).toEqual([{ reason: "timeout", message: "no answer within 1000 ms" }, { reason: "timeout", message: "no answer within 1000 ms" }]);
    await vi.advanceTimersByTimeAsync(1_499);
    expect(l.outcome).toBe("waiting");
    await vi.advanceTimersByTimeAsync(1);
    expect(l.outcome).toEqual({ reason: "timeout", message: "no answer within 2500 ms" });
    expect(vi.getTimerCount()).toBe(0);
    // A late answer answers nothing.
    expect(pending.settle(batch[0]!.id, "s1", { result: "late" })).toBe(false);
  });

  it("leaves no timer once every call is answered or its session fails, and answers only the session that was asked", async () => {
    const pending = new PendingCalls();
    const first = pending.start("s1", 1_000);
    const second = pending.start("s2", 1_000);
    const [one, two] = [watch(first.answer), watch(second.answer)];
    expect(pending.settle(first.id, "s2", { result: "wrong session" })).toBe(false);
    expect(pending.settle(first.id, "s1", { failure: new AppCallError("invalid", "bad answer") })).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
    pending.failSession("s2", new AppCallError("offline", "app 'x' disconnected"));
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(0);
    expect([one.outcome, two.outcome]).toEqual([{ reason: "invalid", message: "bad answer" }, { reason: "offline", message: "app 'x' disconnected" }]);
  });
});
