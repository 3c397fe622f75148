import { describe, expect, it } from "vitest";
import { RedactionPolicy, redact } from "../../src/protect/redact";
import { RULE_IDS } from "../../src/protect/rules";
import { NEGATIVE_SAMPLES, SECRET_KINDS, SECRET_SAMPLES } from "../fixtures/secret-corpus";

// Fake credentials in documented formats: never real.
const GITHUB_TOKEN = "ghp_R8x2Lq9TzV4mN7bK1cW5yH3jP6dF0sA2gE8u";
const AWS_KEY_ID = "AKIAZ7QX3N5W2B4R6T8Y";

describe("the corpus", () => {
  it("has at least 30 kinds of secret, each in several carriers, and every listed value is in its text", () => {
    expect(SECRET_KINDS.length).toBeGreaterThanOrEqual(30);
    for (const kind of SECRET_KINDS) {
      const carriers = new Set(SECRET_SAMPLES.filter((s) => s.kind === kind).map((s) => s.carrier));
      expect(carriers.size, kind).toBeGreaterThanOrEqual(2);
    }
    for (const sample of SECRET_SAMPLES) for (const secret of sample.secrets) expect(sample.text, sample.id).toContain(secret.value);
    for (const rule of new Set(SECRET_SAMPLES.flatMap((s) => s.secrets.map((x) => x.rule)))) expect(RULE_IDS).toContain(rule);
  });
});

describe("redact", () => {
  it.each(SECRET_SAMPLES.map((s) => [s.id, s] as const))("removes every secret from %s, naming the expected rule", (_id, sample) => {
    const { text, hits } = redact(sample.text, sample.policy);
    for (const secret of sample.secrets) {
      expect(text).not.toContain(secret.value);
      const start = sample.text.indexOf(secret.value);
      const hit = hits.find((h) => h.offset <= start && h.offset + h.length >= start + secret.value.length);
      expect(hit?.rule, secret.value).toBe(secret.rule);
      expect(text).toContain(`[REDACTED:${secret.rule}]`);
    }
  });

  it.each(NEGATIVE_SAMPLES.map((s) => [s.id, s] as const))("leaves the look-alikes in %s untouched", (_id, sample) => {
    const { text, hits } = redact(sample.text);
    expect(hits).toEqual([]);
    expect(text).toBe(sample.text);
  });

  it("reports each hit at its place in the original text, with the raw value", () => {
    const text = `a ${GITHUB_TOKEN} b ${AWS_KEY_ID} c`;
    const { text: out, hits } = redact(text);
    expect(out).toBe("a [REDACTED:github-token] b [REDACTED:aws-access-key-id] c");
    expect(hits).toEqual([
      { rule: "github-token", offset: 2, length: GITHUB_TOKEN.length, value: GITHUB_TOKEN },
      { rule: "aws-access-key-id", offset: 45, length: AWS_KEY_ID.length, value: AWS_KEY_ID },
    ]);
    for (const hit of hits) expect(text.slice(hit.offset, hit.offset + hit.length)).toBe(hit.value);
  });

  it("resolves overlapping hits to one redaction named after the most specific rule", () => {
    const { text, hits } = redact(`Authorization: Bearer ${GITHUB_TOKEN}\nGITHUB_TOKEN=${GITHUB_TOKEN}`);
    expect(text).toBe("Authorization: Bearer [REDACTED:github-token]\nGITHUB_TOKEN=[REDACTED:github-token]");
    expect(hits.map((h) => h.rule)).toEqual(["github-token", "github-token"]);
  });

  it("covers the union of overlapping hits, so no fragment of a longer secret survives", () => {
    const value = `${GITHUB_TOKEN}:${"Zq8".repeat(6)}`;
    const { text } = redact(`{"api_key": "${value}"}`);
    expect(text).toBe('{"api_key": "[REDACTED:github-token]"}');
  });

  it("redacts only the password of a URL, keeping where it connected", () => {
    expect(redact("postgres://app:s3cr3t-Pa55@db.internal:5432/orders").text).toBe("postgres://app:[REDACTED:url-password]@db.internal:5432/orders");
    expect(redact("redis://:hunter2xyz@cache:6379").text).toBe("redis://:[REDACTED:url-password]@cache:6379");
  });

  it("keeps the tail of a password that contains & in an env line, but stops at the next query parameter", () => {
    expect(redact("DB_PASSWORD=Tr0ub&dor99\n").text).toBe("DB_PASSWORD=[REDACTED:secret-assignment]\n");
    expect(redact("GET /cb?access_token=9fQx2LmZ7vKp3RtY8wNc&state=abc HTTP/1.1").text).toBe("GET /cb?access_token=[REDACTED:secret-assignment]&state=abc HTTP/1.1");
  });

  it("does not take prose, calls, member access or placeholders under secret names for secrets", () => {
    for (const text of [
      "password: see the wiki",
      "token = getToken()",
      "const secret = config.secretValue;",
      "api_key: test",
      "PASSWORD=",
      'password: "Your account password"',
      "Authorization: Bearer <token>",
      "token_type=bearer expires_in=3600",
      "author: Jane Roe",
      "max_tokens=8000000000000",
    ]) {
      expect(redact(text).hits, text).toEqual([]);
    }
  });

  it("still redacts short human passwords under password names, and high-entropy values under token names", () => {
    expect(redact("password=hunter2").text).toBe("password=[REDACTED:secret-assignment]");
    expect(redact("X-Auth-Token: 7c2f9e1a0b3d4c5e").hits.map((h) => h.rule)).toEqual(["secret-assignment"]);
    expect(redact("secret: aaaaaaaaaaaaaaaaaaaa").hits).toEqual([]);
  });

  it("redacts a private key whose END line was cut off", () => {
    const body = "MIIEpAIBAAKCAQEAx7Q2ZmJ9vL0pX3kT8sN4rW1yU6oI5eA2dF7gH9jK3lM0nB4vC8x";
    const { text } = redact(`-----BEGIN RSA PRIVATE KEY-----\n${body}\n${body.slice(0, 40)}`);
    expect(text).toBe("[REDACTED:pem-private-key]");
  });

  it("does not redact public keys or certificates", () => {
    const text = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----";
    expect(redact(text).hits).toEqual([]);
  });
});

describe("personal data", () => {
  const luhnValid = "4539 1488 0343 6467";
  it("redacts Luhn-valid card numbers, with or without separators, and keeps Luhn-invalid ones", () => {
    expect(redact(`card ${luhnValid} ok`).text).toBe("card [REDACTED:card-number] ok");
    expect(redact("card 4539148803436467.").text).toBe("card [REDACTED:card-number].");
    expect(redact("card 4539-1488-0343-6468").hits).toEqual([]);
    expect(redact("card 4539148803436468").hits).toEqual([]);
  });

  it("keeps numbers that pass Luhn but are not card-shaped: mixed separators, no network prefix, decimals", () => {
    expect(redact("4539 1488-0343 6467").hits).toEqual([]);
    expect(redact("id 1234567812345670").hits).toEqual([]);
    expect(redact('{"ratio": 0.4539148803436467}').hits).toEqual([]);
  });

  it("redacts SSNs the SSA could issue, not impossible ones", () => {
    expect(redact("ssn 123-45-6789").text).toBe("ssn [REDACTED:us-ssn]");
    expect(redact("SSN: 123456789").text).toBe("SSN: [REDACTED:us-ssn]");
    for (const impossible of ["000-12-3456", "666-12-3456", "912-12-3456", "123-00-4567", "123-45-0000"]) expect(redact(impossible).hits).toEqual([]);
  });

  it("leaves e-mail addresses and phone numbers alone unless the policy asks", () => {
    const text = "mail jane.doe@example.org or call +1 415 555 0134";
    expect(redact(text).hits).toEqual([]);
    expect(redact(text, { pii: { email: true } }).text).toBe("mail [REDACTED:email] or call +1 415 555 0134");
    expect(redact(text, { pii: { phone: true } }).text).toBe("mail jane.doe@example.org or call [REDACTED:phone]");
  });

  it("lets the policy switch cards and SSNs off", () => {
    expect(redact(`card ${luhnValid}, ssn 123-45-6789`, { pii: { cards: false, ssn: false } }).hits).toEqual([]);
  });

  it("defaults every field of the policy", () => {
    expect(RedactionPolicy.parse({})).toEqual({ pii: { cards: true, ssn: true, email: false, phone: false } });
    expect(RedactionPolicy.parse({ pii: { email: true } })).toEqual({ pii: { cards: true, ssn: true, email: true, phone: false } });
    expect(RedactionPolicy.safeParse({ pii: { email: "yes" } }).success).toBe(false);
  });
});
