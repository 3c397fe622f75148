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
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Calls the runtime has sent to apps and not yet had answered. In memory only:
 * a pending call's timer keeps the object awake, so no call outlives hibernation.
 */
export class PendingCalls {
  private readonly calls = new Map<string, PendingCall>();

  start(sessionId: string, deadlineMs: number): { id: string; answer: Promise<unknown> } {
    const id = `rt-${crypto.randomUUID()}`;
    const answer = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.calls.delete(id);
        reject(new AppCallError("timeout", `no answer within ${deadlineMs} ms`));
      }, deadlineMs);
      this.calls.set(id, { sessionId, resolve, reject, timer });
    });
    return { id, answer };
  }

  /** Returns false for an answer to no call of ours (late, duplicated, or from before a restart). */
  settle(id: JsonRpcId | null, sessionId: string, outcome: { result: unknown } | { failure: AppCallError }): boolean {
    const call = typeof id === "string" ? this.calls.get(id) : undefined;
    if (!call || call.sessionId !== sessionId) return false;
    this.calls.delete(id as string);
    clearTimeout(call.timer);
    if ("failure" in outcome) call.reject(outcome.failure);
    else call.resolve(outcome.result);
    return true;
  }

  failSession(sessionId: string, error: AppCallError): void {
    for (const [id, call] of this.calls) {
      if (call.sessionId !== sessionId) continue;
      this.calls.delete(id);
      clearTimeout(call.timer);
      call.reject(error);
    }
  }
}
