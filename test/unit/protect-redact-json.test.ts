import { describe, expect, it } from "vitest";
import { assertNoSecrets, redactJson, SecretsFoundError } from "../../src/protect";
import { classifySecretKey } from "../../src/protect/rules/keys";

// Fake credentials in documented formats: never real.
const GITHUB_TOKEN = "ghp_R8x2Lq9TzV4mN7bK1cW5yH3jP6dF0sA2gE8u";
const STRIPE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";

describe("redactJson", () => {
  it("redacts string leaves and values under secret-looking keys, with a JSON Pointer for each hit", () => {
    const input = {
      user: "admin",
      db: { password: "hunter2!", "host/name": "db.internal" },
      logs: [`pushed with ${GITHUB_TOKEN}`, "ok"],
      "a~b": { clientSecret: "Zq8vK2pLm9xR4tW7yB3n" },
      retries: 3,
    };
    const { value, hits } = redactJson(input);
    expect(value).toEqual({
      user: "admin",
      db: { password: "[REDACTED:secret-assignment]", "host/name": "db.internal" },
      logs: ["pushed with [REDACTED:github-token]", "ok"],
      "a~b": { clientSecret: "[REDACTED:secret-assignment]" },
      retries: 3,
    });
    expect(hits.map(({ rule, path, offset, length }) => ({ rule, path, offset, length }))).toEqual([
      { rule: "secret-assignment", path: "/db/password", offset: 0, length: 8 },
      { rule: "github-token", path: "/logs/0", offset: 12, length: GITHUB_TOKEN.length },
      { rule: "secret-assignment", path: "/a~0b/clientSecret", offset: 0, length: 20 },
    ]);
    expect(input.db.password).toBe("hunter2!");
  });

  it("names a whole leaf after the specific rule when one matches inside it", () => {
    const { value, hits } = redactJson({ stripe_key: STRIPE_KEY, api_keys: [GITHUB_TOKEN] });
    expect(value).toEqual({ stripe_key: "[REDACTED:stripe-secret-key]", api_keys: ["[REDACTED:github-token]"] });
    expect(hits.map((h) => h.path)).toEqual(["/stripe_key", "/api_keys/0"]);
  });

  it("redacts numbers under password names, keeps booleans, nulls and non-secret keys", () => {
    const { value } = redactJson({ password: 48213377, auth: true, token: null, token_count: 1234567890123, nextPageToken: "CAUQAAx9Lk2Pq7Rt" });
    expect(value).toEqual({ password: "[REDACTED:secret-assignment]", auth: true, token: null, token_count: 1234567890123, nextPageToken: "CAUQAAx9Lk2Pq7Rt" });
  });

  it("keeps a __proto__ key as data", () => {
    const input = JSON.parse('{"__proto__": {"password": "hunter2!"}}') as unknown;
    const { value } = redactJson(input);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toBe('{"__proto__":{"password":"[REDACTED:secret-assignment]"}}');
  });
});

describe("secret key names", () => {
  it("reads names word by word", () => {
    const secret = ["password", "DB_PASSWORD", "PGPASSWORD", "api_key", "apiKey", "x-api-key", "AWS_SECRET_ACCESS_KEY", "clientSecret", "access_token", "Authorization", "AccountKey", "credentials", "auth", "private_key", "passphrase"];
    const plain = ["author", "authority", "max_tokens", "token_type", "nextPageToken", "token_count", "key", "cache_key", "public_key", "primary_key", "private_key_id", "password_min_length", "secret_arn", "keyboard", "monkey", "client_id", "tokenizer"];
    for (const name of secret) expect(classifySecretKey(name), name).not.toBeNull();
    for (const name of plain) expect(classifySecretKey(name), name).toBeNull();
    expect(classifySecretKey("DB_PASSWORD")).toBe("password");
    expect(classifySecretKey("api_key")).toBe("token");
  });
});

describe("assertNoSecrets", () => {
  it("passes clean messages", () => {
    expect(() => assertNoSecrets([{ content: "hello" }, { content: null }, {}, { content: [{ type: "text", text: "fine" }] }])).not.toThrow();
    expect(() => assertNoSecrets("nothing to see")).not.toThrow();
  });

  it("throws naming the rules and the message index, never the value", () => {
    let error: unknown;
    try {
      assertNoSecrets([{ content: "hello" }, { content: "ok" }, { content: `token ${GITHUB_TOKEN} and ${STRIPE_KEY}` }]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SecretsFoundError);
    const found = error as SecretsFoundError;
    expect(found.message).toBe("secrets found: message 2: github-token, stripe-secret-key");
    expect(found.findings).toEqual([{ index: 2, rules: ["github-token", "stripe-secret-key"] }]);
    expect(JSON.stringify({ message: found.message, findings: found.findings, stack: found.stack })).not.toContain(GITHUB_TOKEN);
  });

  it("looks inside structured content, including values under secret-looking keys", () => {
    expect(() => assertNoSecrets([{ content: [{ type: "text", text: `see ${GITHUB_TOKEN}` }] }])).toThrow(/message 0: github-token/);
    expect(() => assertNoSecrets([{ content: "x" }, { content: { password: "hunter2!" } }])).toThrow(/message 1: secret-assignment/);
  });

  it("checks a single text, and follows the policy", () => {
    expect(() => assertNoSecrets(`key ${GITHUB_TOKEN}`)).toThrow(/message 0: github-token/);
    expect(() => assertNoSecrets("mail jane@example.org")).not.toThrow();
    expect(() => assertNoSecrets("mail jane@example.org", { pii: { email: true } })).toThrow(/email/);
  });
});
