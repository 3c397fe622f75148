import { describe, expect, it } from "vitest";
import { JsonRpcSuccess, plainAnswer, readFrame, rpcResult } from "../../src/protocol/jsonrpc";

describe("readFrame sorts a frame by its shape before validating it", () => {
  it("reads well-formed requests, notifications and answers, an explicit null result included", () => {
    expect(readFrame({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }).kind).toBe("request");
    expect(readFrame({ jsonrpc: "2.0", method: "contexts/changed" }).kind).toBe("notification");
    expect(readFrame({ jsonrpc: "2.0", id: "rt-1", result: null })).toEqual({ kind: "response", frame: { jsonrpc: "2.0", id: "rt-1", result: null } });
    expect(readFrame({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "bad", data: 1 } }).kind).toBe("response");
  });

  const answers: [string, unknown][] = [
    ["neither result nor error", { jsonrpc: "2.0", id: "rt-1" }],
    ["a malformed error object", { jsonrpc: "2.0", id: "rt-1", error: { code: "oops", message: 42 } }],
    ["an error object with an extra member", { jsonrpc: "2.0", id: "rt-1", error: { code: 1, message: "m", stack: "…" } }],
    ["an extra top-level member", { jsonrpc: "2.0", id: "rt-1", result: null, extra: true }],
    ["both result and error", { jsonrpc: "2.0", id: "rt-1", result: 1, error: { code: 1, message: "m" } }],
    ["another jsonrpc version", { jsonrpc: "1.0", id: "rt-1", result: null }],
  ];
  for (const [what, frame] of answers) {
    it(`reads an answer with ${what} as an invalid answer to its id, never as a result`, () => {
      const read = readFrame(frame);
      expect(read).toMatchObject({ kind: "invalid", answer: true, id: "rt-1" });
      expect(read.kind === "invalid" && read.issues.length).toBeGreaterThan(0);
    });
  }

  const requests: [string, unknown, string][] = [
    ["a method and a result", { jsonrpc: "2.0", id: "rt-1", method: "contexts/current", result: null }, "rt-1"],
    ["a malformed method", { jsonrpc: "2.0", id: "rt-1", method: 42 }, "rt-1"],
    ["an extra member", { jsonrpc: "2.0", id: "rt-1", method: "x", extra: 1 }, "rt-1"],
  ];
  for (const [what, frame, id] of requests) {
    it(`reads a request-shaped frame with ${what} as an invalid request, never as an answer`, () => {
      expect(readFrame(frame)).toMatchObject({ kind: "invalid", answer: false, id });
    });
  }

  it("echoes only a valid id, and refuses batches, non-objects and null request ids", () => {
    expect(readFrame({ jsonrpc: "2.0", id: 1.5, method: "x" })).toMatchObject({ kind: "invalid", id: null });
    expect(readFrame({ jsonrpc: "2.0", id: null, method: "x" })).toMatchObject({ kind: "invalid", answer: false, id: null });
    expect(readFrame([{ jsonrpc: "2.0", method: "x" }])).toMatchObject({ kind: "invalid", answer: false, id: null });
    expect(readFrame("ping")).toMatchObject({ kind: "invalid", answer: false, id: null });
  });

  it("always writes result, as null when there is none", () => {
    expect(JSON.parse(rpcResult(3, undefined))).toEqual({ jsonrpc: "2.0", id: 3, result: null });
  });

  it("reads a well-formed result without zod exactly as JsonRpcSuccess does, and leaves every other frame to zod", () => {
    const result = { items: [1, 2], text: "ok" };
    const inherited = Object.assign(Object.create({ extra: 1 }) as object, { jsonrpc: "2.0", id: 1, result: 1 });
    const frames: unknown[] = [
      { jsonrpc: "2.0", id: 1, result },
      { result, id: "rt-1", jsonrpc: "2.0" },
      { jsonrpc: "2.0", id: "x".repeat(128), result: null },
      { jsonrpc: "2.0", id: -0, result: 0 },
      { jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, result: false },
      { jsonrpc: "2.0", id: 1, result: "" },
      // Malformed: each must fall through to zod and be refused there.
      { jsonrpc: "2.0", id: "x".repeat(129), result: null },
      { jsonrpc: "2.0", id: "", result: null },
      { jsonrpc: "2.0", id: 1.5, result: null },
      { jsonrpc: "2.0", id: 2 ** 60, result: null },
      { jsonrpc: "2.0", id: Number.NaN, result: null },
      { jsonrpc: "2.0", id: null, result: null },
      { jsonrpc: "2.0", id: 1, result: undefined },
      { jsonrpc: "2.0", id: 1 },
      { jsonrpc: "2.0", result: 1 },
      { jsonrpc: 2, id: 1, result: 1 },
      { jsonrpc: "2.0", id: 1, result: 1, extra: undefined },
      { jsonrpc: "2.0", id: 1, result: 1, error: { code: 1, message: "m" } },
      { jsonrpc: "2.0", id: 1, result: 1, method: "x" },
      inherited,
      // Well-formed but not a result: zod reads them.
      { jsonrpc: "2.0", id: 1, error: { code: 1, message: "m" } },
      { jsonrpc: "2.0", id: 1, method: "x" },
    ];
    let fast = 0;
    for (const frame of frames) {
      const zod = JsonRpcSuccess.safeParse(frame);
      const plain = plainAnswer(frame as object);
      if (plain) {
        fast++;
        expect(zod.success, JSON.stringify(frame)).toBe(true);
        expect(plain).toStrictEqual(zod.data);
        expect(Object.keys(plain)).toEqual(Object.keys(zod.data!));
        expect(plain.result === (frame as { result: unknown }).result && zod.data!.result === plain.result).toBe(true);
        expect(readFrame(frame)).toStrictEqual({ kind: "response", frame: zod.data });
      } else if ("result" in (frame as object) && !("method" in (frame as object)) && !("error" in (frame as object))) {
        expect(zod.success, JSON.stringify(frame)).toBe(false);
        expect(readFrame(frame)).toMatchObject({ kind: "invalid", answer: true });
      }
    }
    expect(fast).toBe(6);
  });
});
