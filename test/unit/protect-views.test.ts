import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redact, redactJson } from "../../src/protect";
import { NEGATIVE_SAMPLES, SECRET_SAMPLES } from "../fixtures/secret-corpus";

// Fake credentials in documented formats: never real.
const GITHUB = "ghp_R8x2Lq9TzV4mN7bK1cW5yH3jP6dF0sA2gE8u";
const OPENAI = "sk-proj-Qx7vL2mN9pR4tW8yB3nK6jH1dF5sA0gE2uZcXvBnMaSdFgHjKl";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzEXAMPLEKQ";

/** Redacts `text` and checks that no 8-character piece of `secret` survives, that `rule` named it, and that each hit's value is its original span. */
function expectGone(text: string, secret: string, rule: string) {
  const { text: out, hits } = redact(text);
  for (let i = 0; i + 8 <= secret.length; i++) expect(out, `piece ${i} of ${secret} in ${JSON.stringify(out)}`).not.toContain(secret.slice(i, i + 8));
  expect(hits.map((h) => h.rule)).toContain(rule);
  for (const hit of hits) expect(text.slice(hit.offset, hit.offset + hit.length)).toBe(hit.value);
  return out;
}

describe("a token split across lines or by concatenation", () => {
  it("joins string literals concatenated with + across a line", () => {
    expectGone(`const token = "${GITHUB.slice(0, 7)}" +\n  "${GITHUB.slice(7)}";`, GITHUB.slice(7), "github-token");
  });
  it("joins single-quoted literals", () => {
    expectGone(`key = 'sk-' + '${OPENAI.slice(3)}'`, OPENAI.slice(3), "openai-api-key");
  });
  it("joins Python's adjacent literals", () => {
    expectGone(`TOKEN = (\n    "${GITHUB.slice(0, 20)}"\n    "${GITHUB.slice(20)}"\n)`, GITHUB, "github-token");
  });
  it("joins a shell line continuation", () => {
    expectGone(`export GITHUB_TOKEN=${GITHUB.slice(0, 18)}\\\n${GITHUB.slice(18)}\necho done`, GITHUB, "github-token");
  });
  it("joins a JSON string broken across lines, and a hard-wrapped token", () => {
    expectGone(`{"token": "${GITHUB.slice(0, 25)}\n   ${GITHUB.slice(25)}"}`, GITHUB, "github-token");
    expectGone(`{"msg": "${OPENAI.slice(0, 30)}\\n${OPENAI.slice(30)}"}`, OPENAI, "openai-api-key");
  });
});

describe("encoded forms", () => {
  it("reads URL-encoded, \\u-escaped and \\x-escaped tokens", () => {
    expectGone(`GET /hook?t=%67hp_${GITHUB.slice(4)}`, GITHUB.slice(4), "github-token");
    expectGone(`{"note": "\\u0067hp_${GITHUB.slice(4)}"}`, GITHUB.slice(4), "github-token");
    expectGone(`b"\\x67\\x68\\x70\\x5f${GITHUB.slice(4)}"`, GITHUB.slice(4), "github-token");
  });
  it("reads a hex dump of a token's bytes", () => {
    const hex = Buffer.from(GITHUB).toString("hex");
    expectGone(`payload=${hex}`, hex, "github-token");
    const spaced = hex.match(/../g)!.join(" ");
    expectGone(`bytes: ${spaced}`, spaced, "github-token");
  });
});

describe("base64", () => {
  it("redacts the whole segment when base64 text or JSON decodes to a secret", () => {
    const json = Buffer.from(JSON.stringify({ api_key: OPENAI })).toString("base64");
    expect(expectGone(`data=${json};`, json, "openai-api-key")).toBe("data=[REDACTED:openai-api-key];");
    const env = Buffer.from(`AWS_SECRET_ACCESS_KEY=${AWS_SECRET}\nREGION=eu-west-1\n`).toString("base64");
    expectGone(`echo ${env} | base64 -d`, env, "aws-secret-access-key");
  });
  it("follows a segment wrapped at 76 columns", () => {
    const long = Buffer.from(`# config\nGITHUB_TOKEN=${GITHUB}\nOPENAI_API_KEY=${OPENAI}\n`).toString("base64");
    const wrapped = long.match(/.{1,76}/g)!.join("\n");
    const out = expectGone(`$ base64 config.env\n${wrapped}\n$ ls`, long.slice(0, 76), "github-token");
    expect(out).toBe("$ base64 config.env\n[REDACTED:github-token]\n$ ls");
  });
});

describe("invisible characters and look-alikes", () => {
  it.each([
    ["ZWSP", "\u200b"],
    ["ZWJ", "\u200d"],
    ["WJ", "\u2060"],
    ["SHY", "\u00ad"],
    ["CGJ", "\u034f"],
  ])("sees through %s inside a token", (_name, char) => {
    expectGone(`token ${GITHUB.slice(0, 10)}${char}${GITHUB.slice(10)} here`, GITHUB.slice(10), "github-token");
  });
  it("sees through a Cyrillic letter or full-width letters in the prefix", () => {
    expectGone(`gh\u0440_${GITHUB.slice(4)}`, GITHUB.slice(4), "github-token");
    expectGone(`\uff47\uff48\uff50\uff3f${GITHUB.slice(4)}`, GITHUB.slice(4), "github-token");
  });
});

describe("markdown tables", () => {
  it("redacts a value in a row named by its first cell", () => {
    const out = expectGone("| setting | value |\n|---|---|\n| host | db.internal |\n| password | hunter2-Xk9q |", "hunter2-Xk9q", "secret-assignment");
    expect(out).toContain("db.internal");
  });
  it("redacts a value in a column named by the header row", () => {
    const out = expectGone("| user | password | role |\n| --- | --- | --- |\n| admin | Zq8#vK2pLm9x | owner |\n| ci | `r4Nd0m!pass` | bot |", "Zq8#vK2pLm9x", "secret-assignment");
    expect(out).not.toContain("r4Nd0m!pass");
    expect(out).toContain("| admin |");
    expect(out).toContain("owner");
  });
  it("leaves tables that only talk about secrets alone", () => {
    const text = "| field | type | notes |\n|---|---|---|\n| password | `string` | required |\n| api_key | string | see the wiki |\n| token_ttl | 3600 | seconds |";
    expect(redact(text).hits).toEqual([]);
  });
});

describe("Authorization values in RFC 6750 token68 form", () => {
  it.each(["AbCdEf12.GhIjKl34.MnOpQr56", "mF_9.B5f-4.1JqM~x", "YWxhZGRpbjpvcGVuc2VzYW1l", "Ab9+Cd8/Ef7~Gh6.Ij5==", "AbCdEf.GhIjKl.MnOpQrSt"])("redacts %s", (value) => {
    expectGone(`Authorization: Bearer ${value}`, value, "authorization-header");
    expectGone(`{"headers": {"authorization": "Basic ${value}"}}`, value, "authorization-header");
  });
  it("still leaves code that reads a token alone", () => {
    expect(redact("Authorization: Bearer this.accessToken").hits).toEqual([]);
  });
});

describe("a PEM private key flattened to one line and cut", () => {
  const body = "MIIEpAIBAAKCAQEAx7Q2ZmJ9vL0pX3kT8sN4rW1yU6oI5eA2dF7gH9jK3lM0nB4vC8x";
  it("redacts it when newlines became spaces", () => {
    const out = expectGone(`summary: -----BEGIN RSA PRIVATE KEY----- ${body} ${body.slice(0, 30)}`, body.slice(0, 30), "pem-private-key");
    expect(out).toBe("summary: [REDACTED:pem-private-key]");
  });
  it("redacts it when newlines became \\n escapes or vanished", () => {
    expectGone(`"-----BEGIN PRIVATE KEY-----\\n${body}\\n${body.slice(0, 20)}…"`, body, "pem-private-key");
    expectGone(`-----BEGIN EC PRIVATE KEY-----${body}${body}`, body, "pem-private-key");
  });
});

describe("redactJson", () => {
  it("uses the same views on string leaves", () => {
    const { value } = redactJson({ note: `gh\u200bp_${GITHUB.slice(4)}` });
    expect(value).toEqual({ note: "[REDACTED:github-token]" });
  });
});

describe("views, mapped back", () => {
  const disguised = SECRET_SAMPLES.filter((s) => s.shape !== "plain" && s.policy === undefined);
  const filler = NEGATIVE_SAMPLES.map((s) => s.text);

  it("redact a disguised secret anywhere in ordinary text, replacing only the original spans the hits name", () => {
    fc.assert(
      fc.property(fc.constantFrom(...disguised), fc.constantFrom(...filler), fc.constantFrom(...filler), fc.constantFrom("\n", " ", "\n\n"), (sample, before, after, gap) => {
        // Tables and labelled pieces are read line by line: text run onto the last line makes a table row prose (a
        // gap the property found when the corpus grew, there before issue 20), and a last piece a log line's field.
        const joint = /^(?:markdown|labelled)/.test(sample.shape) ? `\n${gap.trim()}` : gap;
        const text = `${before}${joint}${sample.text}${joint}${after}`;
        const { text: out, hits } = redact(text);
        let rebuilt = "";
        let cursor = 0;
        for (const hit of hits) {
          expect(hit.offset).toBeGreaterThanOrEqual(cursor);
          expect(text.slice(hit.offset, hit.offset + hit.length)).toBe(hit.value);
          rebuilt += `${text.slice(cursor, hit.offset)}[REDACTED:${hit.rule}]`;
          cursor = hit.offset + hit.length;
        }
        expect(out).toBe(rebuilt + text.slice(cursor));
        for (const secret of sample.secrets) expect(out, sample.id).not.toContain(secret.value);
        // The ordinary text around it comes through whole.
        expect(out.startsWith(before)).toBe(true);
        expect(out.endsWith(after)).toBe(true);
      }),
      { seed: 20261123, numRuns: 300 },
    );
  });
});
