/**
 * `npx tsx bench/loops-adversarial.ts`: how long the loop detector takes to mask one result of about 1 MB of each
 * adversarial shape (long runs its patterns could backtrack over: spaces, fields, headers, slashes, base64, short
 * durations with no "ago", deep and wide JSON). Each stored result is masked once (`CanonicalResults`); a shape that
 * took time quadratic in its size would stall a turn, so each figure should stay well under a second. Then how long
 * `findLoops` takes to read one call's results of about 1 MB each over their series: numbers compared slot by slot,
 * lines sorted.
 */
import { canonicalResult, findLoops } from "../src/reminders/loops";

const MB = 1 << 20;
const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length));
const shapes: Record<string, () => string> = {
  spaces: () => " ".repeat(MB),
  "blank lines": () => `x${"\n".repeat(MB)}y`,
  "blank lines in a JSON string": () => JSON.stringify({ stdout: `x${"\n".repeat(MB / 2)}y` }),
  "words and spaces": () => fill("a  "),
  "an AGE table": () => "NAME   AGE\n" + fill("pod-1   5m\n"),
  "AGE outside a table": () => fill("x AGE y "),
  "Up 3 minutes": () => fill("Up 3 minutes "),
  "about … 3 minutes ago": () => "about ".repeat(170_000) + "3 minutes ago",
  "short durations, no ago": () => fill("1m "),
  "duration fields": () => fill('"latency_ms": 12, '),
  "name and number": () => fill("duration_ms 5 "),
  "a name, spaces, a letter": () => "name" + " ".repeat(MB) + "x",
  "URL fields": () => fill("request_log_url: https://x/?"),
  "quota headers": () => fill("X-Api-Call-Limit: 4/40\n"),
  "header lines": () => fill("x-thing: value\n"),
  "an HTTP head": () => "HTTP/1.1 200 OK\n" + fill("x-a: b\n"),
  "dated header blocks": () => fill("date: Tue, 22 Oct 2024 10:00:00 GMT\nx: y\n\n"),
  slashes: () => fill("a/b+c/"),
  base64: () => fill("Ab3/"),
  "served by": () => fill("served by "),
  "prefixed hex": () => fill("TS-dd46514dfa90 "),
  base62: () => fill("pi_3QE2KHGFnoHsgltYIyZkxvvI "),
  "dig answers": () => fill("api.example.\t248\tIN\tA\t1.2.3.4\n"),
  "BuildKit lines": () => fill("#5 1.841 step\n"),
  "at a clock time": () => fill("at 12:00:00 "),
  "deep JSON": () => "[".repeat(MB / 2) + "]".repeat(MB / 2),
  "a JSON string that never closes": () => '["' + fill('\\"'),
  "long numbers in JSON": () => "[" + fill("1850000000000000001,") + "0]",
  "wide JSON of quota blocks": () => JSON.stringify(Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`rateLimit${i}`, { remaining: i }]))),
};
for (const [name, make] of Object.entries(shapes)) {
  const text = make();
  const started = performance.now();
  canonicalResult(text);
  console.log(`${name.padEnd(28)} ${(performance.now() - started).toFixed(0).padStart(5)} ms  (${(text.length / MB).toFixed(2)} M characters)`);
}

const numbers = (seed: number) => Array.from({ length: 150_000 }, (_, i) => `${(i * 7919 + seed) % 1000}`).join(" ");
const lines = (rotate: number) => Array.from({ length: 60_000 }, (_, i) => `row ${(i + rotate) % 60_000} ok`).join("\n");
const series: Record<string, () => string[]> = {
  "4 results, numbers up and down": () => [0, 3, 1, 2].map(numbers),
  "2 results, numbers apart": () => [0, 1].map(numbers),
  "3 results, lines reordered": () => [0, 1, 2].map((k) => lines(k * 20_000)),
};
for (const [name, make] of Object.entries(series)) {
  const results = make();
  const started = performance.now();
  findLoops(results.map((result, k) => ({ name: "probe", args: "{}", result, message: k, userTurn: 1 })));
  const chars = results.reduce((sum, r) => sum + r.length, 0);
  console.log(`${name.padEnd(32)} ${(performance.now() - started).toFixed(0).padStart(5)} ms  (${results.length} × ${(chars / results.length / MB).toFixed(2)} M characters)`);
}
