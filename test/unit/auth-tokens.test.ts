/**
 * Credentials: verifyToken keeps each secret's HMAC key once per isolate, and still answers exactly as hono's
 * `verify` with the secret itself does (HS256 only, dates checked, the payload read through Credential).
 */
import { sign, verify } from "hono/jwt";
import { describe, expect, it } from "vitest";
import { mintToken, verifyToken } from "../../src/http/auth";

const frontend = { kind: "frontend" as const, tenant: "acme", sub: "ada" };
const now = () => Math.floor(Date.now() / 1000);

/** What verifyToken answered before it kept the key: hono's verify with the secret string. */
async function byString(secret: string, token: string) {
  try {
    return await verify(token, secret, "HS256");
  } catch {
    return null;
  }
}

describe("verifyToken", () => {
  it("accepts its own secret's tokens and refuses forged, expired, early, other-algorithm and tampered ones, as hono's verify with the secret does", async () => {
    const secret = "s3cret";
    const [header, payload] = (await mintToken(secret, frontend)).split(".");
    const tokens = {
      valid: await mintToken(secret, frontend),
      app: await mintToken(secret, { kind: "app", tenant: "acme", sub: "ada", app: "notes" }),
      lasting: await mintToken(secret, frontend, 60),
      forged: await mintToken("other", frontend),
      expired: await sign({ ...frontend, exp: now() - 1 }, secret, "HS256"),
      early: await sign({ ...frontend, nbf: now() + 60 }, secret, "HS256"),
      futureIat: await sign({ ...frontend, iat: now() + 60 }, secret, "HS256"),
      hs512: await sign(frontend, secret, "HS512"),
      unsigned: `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${payload}.`,
      tampered: `${header}.${Buffer.from(JSON.stringify({ ...frontend, sub: "eve" })).toString("base64url")}.${(await mintToken(secret, frontend)).split(".")[2]}`,
      notCredential: await sign({ kind: "admin", tenant: "acme", sub: "ada" }, secret, "HS256"),
      garbage: "a.b",
    };
    const answers = Object.fromEntries(await Promise.all(Object.entries(tokens).map(async ([name, token]) => [name, await verifyToken(secret, token)])));
    expect(answers).toEqual({
      valid: frontend,
      app: { kind: "app", tenant: "acme", sub: "ada", app: "notes" },
      lasting: frontend,
      forged: null,
      expired: null,
      early: null,
      futureIat: null,
      hs512: null,
      unsigned: null,
      tampered: null,
      notCredential: null,
      garbage: null,
    });
    for (const [name, token] of Object.entries(tokens)) expect(answers[name] === null, name).toBe((await byString(secret, token)) === null || name === "notCredential");
  });

  it("verifies with each secret's own key when the secret changes", async () => {
    const first = await mintToken("first", frontend);
    const second = await mintToken("second", frontend);
    expect(await verifyToken("first", first)).toEqual(frontend);
    expect(await verifyToken("second", first)).toBeNull();
    expect(await verifyToken("second", second)).toEqual(frontend);
    expect(await verifyToken("first", second)).toBeNull();
    expect(await verifyToken("first", first)).toEqual(frontend);
  });
});
