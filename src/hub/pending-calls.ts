import type { MissingReason } from "../protocol/evidence";
import type { JsonRpcId } from "../protocol/jsonrpc";

/** Why a call to an app produced no usable answer; `reason` is what a turn reports as missing. */
export class AppCallError extends Error {
  constructor(
    readonly reason: MissingReason,
    message: string,
  ) {
    super(message);
  }
}

interface PendingCall {
  sessionId: string;
  resolve(result: unknown): void;
  reject(error: AppCallError): void;
  /** When it times out (Date.now()), and the `deadlineMs` it was given. */
  deadline: number;
  deadlineMs: number;
}

/**
 * Calls the runtime has sent to apps and not yet had answered. In memory only:
 * a pending call's timer keeps the object awake, so no call outlives hibernation.
 * One timer serves them all, set for the earliest deadline (a turn's batch of calls sets one, not one each): when it
 * fires, each call past its own deadline times out and the timer is set again for the next.
 */
export class PendingCalls {
  private readonly calls = new Map<string, PendingCall>();
  private timer: { at: number; handle: ReturnType<typeof setTimeout> } | null = null;

  start(sessionId: string, deadlineMs: number): { id: string; answer: Promise<unknown> } {
    const id = `rt-${crypto.randomUUID()}`;
    const deadline = Date.now() + deadlineMs;
    const answer = new Promise<unknown>((resolve, reject) => this.calls.set(id, { sessionId, resolve, reject, deadline, deadlineMs }));
    if (!this.timer || deadline < this.timer.at) this.arm(deadline);
    return { id, answer };
  }

  /** Returns false for an answer to no call of ours (late, duplicated, or from before a restart). */
  settle(id: JsonRpcId | null, sessionId: string, outcome: { result: unknown } | { failure: AppCallError }): boolean {
    const call = typeof id === "string" ? this.calls.get(id) : undefined;
    if (!call || call.sessionId !== sessionId) return false;
    this.calls.delete(id as string);
    this.disarmWhenIdle();
    if ("failure" in outcome) call.reject(outcome.failure);
    else call.resolve(outcome.result);
    return true;
  }

  failSession(sessionId: string, error: AppCallError): void {
    for (const [id, call] of this.calls) {
      if (call.sessionId !== sessionId) continue;
      this.calls.delete(id);
      call.reject(error);
    }
    this.disarmWhenIdle();
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer.handle);
    this.timer = { at, handle: setTimeout(() => this.expire(), Math.max(0, at - Date.now())) };
  }

  /** With no call waiting, no timer keeps the object awake. */
  private disarmWhenIdle(): void {
    if (this.calls.size > 0 || !this.timer) return;
    clearTimeout(this.timer.handle);
    this.timer = null;
  }

  private expire(): void {
    this.timer = null;
    const now = Date.now();
    let next = Infinity;
    for (const [id, call] of this.calls) {
      if (call.deadline > now) {
        next = Math.min(next, call.deadline);
        continue;
      }
      this.calls.delete(id);
      call.reject(new AppCallError("timeout", `no answer within ${call.deadlineMs} ms`));
    }
    if (next !== Infinity) this.arm(next);
  }
}
