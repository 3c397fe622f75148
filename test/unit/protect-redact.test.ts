import { describe, expect, it } from "vitest";
import { RedactionPolicy, redact, redactJson, RULE_IDS } from "../../src/protect";
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

describe("a prefixed token cut short or given in pieces (issue 20)", () => {
  // The shape: 20 characters of a GitHub token on one line after a label, the rest on the next.
  const token = "ghp_K7mQ2xV9pL4wR8tZ3nB6yH1cJ5dF0sA2gE8u";

  it("redacts every piece, whatever the label and its language", () => {
    const labels: [string, string][] = [
      ["token part 1:", "token part 2:"],
      ["key (1/2):", "key (2/2):"],
      ["first half:", "second half:"],
      ["line 1", "line 2"],
      ["Teil 1:", "Teil 2:"],
      ["第一部分：", "第二部分："],
      ["часть 1:", "часть 2:"],
      ["", ""],
    ];
    for (const [first, second] of labels) {
      for (const cut of [8, 20, 24]) {
        // (A blank line before the next text: the joined view's hard wraps take a line's first word after a token.)
        const text = `Here it is.\n${first} ${token.slice(0, cut)}\n${second} ${token.slice(cut)}\n\nThanks.`;
        const { text: out } = redact(text);
        expect(out, text).not.toContain(token.slice(0, cut));
        expect(out, text).not.toContain(token.slice(cut));
        expect(out, text).toMatch(/^Here it is\.\n.*\[REDACTED:github-token\]\n\nThanks\.$/);
      }
    }
  });

  it("redacts a token cut after its prefix and at least 12 characters, and nothing shorter", () => {
    expect(redact(`auth failed for ${token.slice(0, 16)}… (truncated)`).text).toBe("auth failed for [REDACTED:github-token]… (truncated)");
    expect(redact(`auth failed for ${AWS_KEY_ID.slice(0, 16)}…`).text).toBe("auth failed for [REDACTED:aws-access-key-id]…");
    expect(redact(`auth failed for ${token.slice(0, 15)}…`).text).toBe(`auth failed for ${token.slice(0, 15)}…`);
  });

  it("puts pieces together across quotes, `+`, a trailing backslash and the strings of a JSON array", () => {
    for (const text of [
      `["${token.slice(0, 14)}", "${token.slice(14)}"]`,
      `{\n  "token": [\n    "${token.slice(0, 14)}",\n    "${token.slice(14)}"\n  ]\n}`,
      `t = ${token.slice(0, 10)} +\n    ${token.slice(10)}`,
      `export T=${token.slice(0, 10)}\\\n${token.slice(10)}`,
    ]) {
      const { text: out } = redact(text);
      expect(out, text).not.toContain(token.slice(0, 10));
      expect(out, text).not.toContain(token.slice(14));
    }
    const { value } = redactJson({ q: [token.slice(0, 10), token.slice(10)], words: ["part 1", "part 2"] });
    expect(value).toEqual({ q: ["[REDACTED:github-token]", "[REDACTED:github-token]"], words: ["part 1", "part 2"] });
  });

  it("leaves prefixes with no token after them, words after them, placeholders and unrelated labelled lines alone", () => {
    for (const text of [
      "GitHub tokens start with ghp_, gho_ or github_pat_; AWS key ids with AKIA or ASIA; Slack bot tokens with xoxb-.",
      "pip install scikit-learn sk-learn-extras\nthe sk-learn pipeline\nsha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nSLACK_BOT_TOKEN=xoxb-your-bot-token\nAWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX",
      "from huggingface_hub import hf_hub_download\nnpm_config_registry=https://registry.npmjs.org/",
      "part 1: Introduction\npart 2: build a2b3c4d5e6f7a8b9\n(1/2) deploy 7f3a9c21deadbeef0123\n(2/2) done",
      // Names with digits between words, after a prefix: a model's, a setting's, a CSS class's.
      "load hf_Qwen2Instruct7B, set npm_config2Registry9x, style class sk-Btn2Primary3Large, run SG.Run2Test4Suite",
    ]) expect(redact(text).hits, text).toEqual([]);
  });

  it("puts pieces together across a blank line", () => {
    const [first, second] = [token.slice(0, 20), token.slice(20)];
    for (const text of [`token part 1: ${first}\n\ntoken part 2: ${second}`, `(1/2) ${first}\n  \n(2/2) ${second}\n`]) {
      const { text: out } = redact(text);
      expect(out, text).not.toContain(second);
      expect(out, text).not.toContain(first.slice(4));
    }
  });

  it("does not take a word of ordinary language on the next line for the rest of a wrapped token", () => {
    expect(redact(`token ${token}\nthanks, and send the report`).text).toBe("token [REDACTED:github-token]\nthanks, and send the report");
    expect(redact(`key: ${token.slice(0, 30)}\n${token.slice(30)}`).text).toBe("key: [REDACTED:github-token]");
  });

  it("does not run a whole token into the next line's id, nor one token into another", () => {
    const log = `token ${token}\n> send(payload) commit 0b5e20a958106dab692f98f38613629a5e0e28e7`;
    expect(redact(log).text).toBe("token [REDACTED:github-token]\n> send(payload) commit 0b5e20a958106dab692f98f38613629a5e0e28e7");
    const two = `Authorization: Bearer ${token}\nGITHUB_TOKEN=${GITHUB_TOKEN}`;
    expect(redact(two).text).toBe("Authorization: Bearer [REDACTED:github-token]\nGITHUB_TOKEN=[REDACTED:github-token]");
  });
});
