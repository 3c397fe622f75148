/**
 * The loop detector: pure, over the conversation's recent tool calls in the order they were made. A loop is calls
 * wasted by repeating: the same call — tool, normalised arguments and result alike — again and again, a short cycle of
 * calls (A-B-A-B, period up to `maxPeriod`), or a parallel batch made again whole. It is counted by the calls it
 * wasted, so A-B-A-B (two wasted) weighs what one call made three times does. Polling whose state changes, retries
 * with changed arguments and paging (a cursor that advances) never repeat a whole fingerprint, so they are never loops.
 */

/** One call as the detector reads it: the tool's name, its arguments as the model wrote them, and its result (null: none yet). */
export interface CallRecord {
  name: string;
  args: string;
  result: string | null;
  /** The assistant message that made it: calls of one message are a parallel batch, compared in any order. */
  message?: number;
  /** The user's message it answers (their count so far): a call's series never spans a new one (`seriesOf`). */
  userTurn?: number;
}

export interface LoopOptions {
  /**
   * How many times one call repeats before it is a loop (default 3): a loop has wasted `repeats - 1` calls, and a
   * cycle or batch must also repeat once whole. 0 or 1 finds none.
   */
  repeats: number;
  /** The longest cycle counted (default 3); a repeated batch counts whatever its size. */
  maxPeriod: number;
  /**
   * Whether a tool is known to act (its app annotated it as not read-only, or destructive): a one-off call of it is
   * progress, never work set aside beside a cycle. Unknown tools are read as not acting.
   */
  acts: (tool: string) => boolean;
  /** A result as compared (default `canonicalResult`; a caller may remember what it read before: `CanonicalResults`). */
  canonical: (result: string) => string;
}

export const LOOP_DEFAULTS: LoopOptions = { repeats: 3, maxPeriod: 3, acts: () => false, canonical: canonicalResult };

/** How a call's results differed and were still one outcome: in numbers that are noise, or in the order of their lines. */
export type Alike = "numbers" | "order";

/** One loop: the calls it spans (`start`..`end`, inclusive), the call that made it one (`firedAt`), its period and its tools. */
export interface Loop {
  start: number;
  end: number;
  firedAt: number;
  period: number;
  /** The tools of one cycle, in order (one name for a plain repeat). */
  tools: string[];
  /** Whole repetitions the run holds. */
  repeats: number;
  /** Calls made again with nothing new learned: the run's length less one cycle. */
  wasted: number;
  /** How its results differed though read as one outcome (`fingerprintsOverSeries`); absent when they were the same. */
  alike?: Alike[];
}

/** The value with every object's keys sorted, no whitespace; numbers as JSON numbers (1.0 and 1 alike). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Arguments canonicalised when they parse as JSON; otherwise with runs of white space made one. An empty string is `{}`. */
export function canonicalArgs(args: string): string {
  const trimmed = args.trim();
  if (trimmed === "") return "{}";
  try {
    return canonicalJson(JSON.parse(trimmed));
  } catch {
    return trimmed.replace(/\s+/g, " ");
  }
}

/**
 * What names one occurrence rather than an outcome, by its shape: a timestamp (a date with its time, or a clock time to
 * the second with its zone), a duration measured finer than a second (`980ms`, `1.24 s`), a UUID, a time relative
 * to now ("12 minutes ago", "Up 3 minutes"); by its field's name, `namedOccurrence`; by its column, `maskAges`. The
 * same error at another moment is the same error. A date alone, a whole number of seconds or minutes ("5 min
 * remaining"), a count or a percentage is a state, and one that changed is a change.
 */
const OCCURRENCE = new RegExp(
  [
    // Underscores for colons too: a timestamp in a file name (`2024-06-07T10_22_41_118Z-debug.log`).
    /\d{4}-\d{2}-\d{2}[T _]\d{2}[:_]\d{2}(?:[:_]\d{2}(?:[.,_]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/.source,
    // ISO 8601's basic format, as AWS signs with it (`X-Amz-Date=20240221T142336Z`).
    /(?<![\p{L}\p{N}])\d{8}T\d{6}(?:[.,]\d+)?(?:Z|[+-]\d{4})?(?![\p{L}\p{N}])/u.source,
    // Playwright's snapshot refs name an element of one snapshot (`[ref=s2e7]` is element 7 of snapshot 2): the
    // snapshot's number is the occurrence, the element's is the page's.
    /(?<=\[ref=s)\d+(?=e\d+\])/.source,
    // A clock time is a moment only beside a date or a zone: alone, "00:04:12.8" is as often an interval (a lag).
    /(?:\b\d{1,2}[ -]\p{L}{3,9}[ -]\d{4}|\b\p{L}{3,9} \d{1,2},? \d{4}|\b\d{1,2}\/\d{1,2}\/\d{2,4})[ T]\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2})(?![\p{L}\p{N}])/u.source,
    /\b\d+(?:\.\d+)?\s?(?:ms|msec|millis|µs|us|ns)\b|\b\d+\.\d+\s?(?:s|sec|secs|seconds)\b/.source,
    // How long it took, in whole seconds too ("Read complete after 2s", "took 3s", "done in 4 seconds"); not a
    // countdown ("retry after 8 seconds", "starting after 30s", "ready in 30 seconds"), which is a state.
    /(?<=\b(?:took|(?:complete|completed|finished|done)\s(?:after|in))\s)\d+(?:\.\d+)?\s?(?:s|secs?|seconds?)\b/.source,
    // A log line's clock time to the second, at the line's start (`09:01:17  Running with dbt`, `[09:19:37]: Cruising`).
    /(?<=^|\n)\[?\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\]?(?=[\s:])/.source,
    // A clock time said to be when it happened ("completed at 13:56:33", "took 17ms at 14:13:04", a console line's
    // "@ 14:26:33"); not when it will ("next run scheduled at 14:00:00").
    /(?:(?<=\b(?:completed|finished|done|ended|failed|succeeded|ran|took\s\S+)\s)at\s|@\s?)\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/.source,
    // Who answered: one replica or host of many ("read from mongo-rs0-1:27017", "Response from 2606:4700::1111").
    // A host: a dot, a colon or a numbered replica ("-1") in it; never a person ("handled by alice") or a count ("read by 0").
    /(?<=\b(?:served|read|answered|handled|response)\s(?:by|from)\s)(?=[\w\[\]-]*[.:]\w|[\w-]*-\d)[\w.:\[\]-]+/.source,
    // A DNS message's id, as dig prints its header ("opcode: QUERY, status: NOERROR, id: 65293").
    /(?<=\bopcode: \w+, status: \w+, id: )\d+/.source,
    // Epoch seconds to the millisecond (Prometheus's `[1729604669.118, "0"]`): a moment, whatever field holds it.
    /(?<![\d.])1[5-9]\d{8}\.\d{1,9}(?![\d.])/.source,
    // How fast a transfer went ("1.6 MB/s"), not what was transferred.
    /\b\d+(?:\.\d+)?\s?(?:[kKMGT]i?B|B)\/s\b/.source,
    // A time relative to now ("about 12 minutes ago", Docker's "Up 3 minutes"): the same state, read a minute later.
    /\b(?:(?:about|almost|over|less than)\s)?(?:an?|\d+)\s(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\sago\b|\bUp\s(?:(?:about|less than)\s)?(?:an?|\d+)\s(?:seconds?|minutes?|hours?|days?|weeks?)\b/.source,
    // The same, its units cut short and run together, as systemd and many CLIs print it ("7min ago", "1h 12min ago");
    // three parts at most, so a long run of "1m 1m …" with no "ago" is read once, not once from every start.
    /\b(?:\d+\s?(?:s|sec|secs|m|min|mins|h|hr|hrs|d|w|mo|y)\s?){1,3}ago\b/.source,
    /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/.source,
  ].join("|"),
  "giu",
);

/**
 * A field: its name (quoted or not, at most 41 characters), what leads to its value, and the value, a URL's query
 * included (`"request_id": "a9f0e1`, `X-Request-Id: …`, `ts=…`); or a name and a number set apart by spaces, as
 * summaries print them (node's test runner's `duration_ms 51.490`).
 */
const FIELD = /(?<![\w-])(["']?)(?=([A-Za-z_][\w-]{0,40}))\2\1(\s*[:=]\s*["']?|[ \t]+(?=\d))([\w.:+/=?%-]{1,200})/g;

/** A field name's words: snake, kebab and camel case alike ("serverTimeMs" is server, time, ms). */
function nameWords(name: string): string[] {
  return name.split(/[_-]+|(?<=[a-z\d])(?=[A-Z])/).filter(Boolean).map((w) => w.toLowerCase());
}

const IDENTITY = new Set(["request", "trace", "span", "correlation", "transaction"]);
/** What follows an identity word in a field naming one request: its id, or the link to its log (Stripe's `request_log_url`). */
const IDENTITY_PART = new Set(["id", "log", "url"]);
const TIME = new Set(["time", "ts", "timestamp", "stamp", "at", "date", "generated", "fetched", "updated", "created", "modified"]);
/** Words that name how long the call itself took, or how long its server has run (`took`, `latency_ms`, `uptime_seconds`). */
const CALL_TIME = new Set(["latency", "elapsed", "took", "uptime", "generationtime"]);
/** Units a duration's name may end in; with a word of the call's time before it (`query_time_ms`, `response_time_us`), the call's. */
const TIME_UNIT = new Set(["ms", "millis", "msec", "us", "ns"]);
const PER_TIME = new Set(["second", "sec", "s", "minute", "min"]);
/** Words that make a duration's unit the call's own: how long it took to process, query, respond, execute. */
const CALL_TIME_WORD = new Set(["time", "duration", "query", "response", "processing", "process", "request", "exec", "execution", "service"]);
/** Words of a setting rather than a measure (`max_requests_per_second`). */
const SETTING = new Set(["max", "min", "limit", "target", "allowed"]);
/** What a field's name says of a quota: the call's (`X-Shopify-Shop-Api-Call-Limit`, `Sforce-Limit-Info`), not a resource's (`memory_limit`). */
const CALL_QUOTA = new Set(["call", "api", "info", "usage"]);
/** What a page or sync token is reissued as on every call (`nextSyncToken`, `next_page_token`), unlike an ETag, which follows the content. */
const REISSUED = new Set(["next", "sync", "page", "continuation"]);

/**
 * Whether a field's value names its occurrence, by the field's name: one request's identity, however short
 * (`"request_id": "a9f0e1"`, `X-Request-Id: …`, `correlation-id: 5e0d1c`: the names HTTP's request-id headers and
 * distributed tracing give them), or its log's link; what HTTP says of the call rather than the resource (the rate
 * limit, a quota named for the call or the API, a cache's `Age`); how long the call took or its server has run
 * (`took`, `latency_ms`, `query_time_ms`, `uptime_seconds`; not a countdown such as `eta_seconds`); epoch seconds or
 * milliseconds, or a fraction, in a field named for a time; a page or sync token reissued on every call; the server's
 * `system_fingerprint`.
 */
function namedOccurrence(name: string, value: string): boolean {
  // A header's name, wherever it is printed (gRPC metadata as JSON): an extension header (`x-…`) that says what HTTP
  // says of the exchange, as in a header block. Other hyphenated names (`memory-limit`, `routing-key`) are fields.
  if (/^x-[\w-]+$/i.test(name) && EXCHANGE_HEADER.test(name)) return true;
  const epoch = /^1\d{9}(?:\d{3})?$/.test(value);
  // Most fields are none of these: read a name's words only when it could be one.
  if (!epoch && !/id|rat|age|limit|log|ms|us|ns|lat|elapsed|took|uptime|time|token|fingerprint|per|cache|serv|upstream|backend|replica|ttl|nonce/i.test(name)) return false;
  const words = nameWords(name);
  const after = (word: string, next: string) => words.some((w, k) => w === word && words[k + 1] === next);
  // One request's identity, however short ("request_id", "X-Trace-Id", "correlation-id", "request_log_url").
  if (words.some((w, k) => IDENTITY.has(w) && IDENTITY_PART.has(words[k + 1] ?? ""))) return true;
  // What describes the call rather than the resource: the quota it used (`X-Shopify-Shop-Api-Call-Limit: 4/40`,
  // `Sforce-Limit-Info: api-usage=48213/100000`), how long a cache held the answer, how long the call took.
  const callQuota = words.includes("ratelimit") || after("rate", "limit") || (words.includes("limit") && words.some((w) => CALL_QUOTA.has(w)));
  // A cache's `Age: 120`, or any field named `age` holding how long ago, as a table's AGE column does (`"age": "6m"`).
  if (words.length === 1 && words[0] === "age" && /^(?:\d+|(?:\d+[smhd])+)$/.test(value)) return true;
  if (callQuota) return /\d/.test(value);
  // How long the call took by a unit finer than a second with a word of the call's time (`openai-processing-ms`,
  // `query_time_ms`), or how fast it ran (`bytesProcessedPerSecond`); a countdown (`eta_ms`, `timeout_ms`) or a
  // setting (`max_requests_per_second`) is not the call's.
  const ranFor = namesCallDuration(name);
  const ranAt = words.some((w, k) => w === "per" && PER_TIME.has(words[k + 1] ?? "")) && !words.some((w) => SETTING.has(w));
  if ((words.some((w) => CALL_TIME.has(w)) || ranFor || ranAt) && /^\d+(?:\.\d+)?$/.test(value)) return true;
  // Whether a cache answered (`cacheHit`), and how much of a prompt it held (`cached_tokens`); which replica or host
  // served it (`servingData: envoy-d9b6d`, `upstream: 10.0.3.7:8080`), a host by its shape; how long a DNS answer has
  // left (DoH's `TTL`, as dig's lines).
  if ((words.includes("cache") && words.includes("hit")) || (words.includes("cached") && words.includes("tokens") && /^\d+$/.test(value))) return true;
  // A host by its shape: a dot or a port, a numbered replica (`-1`), a pod's generated suffix (`-kcwwm`, `-d9b6d`),
  // or a Deployment's pod (`pricing-grpc-7c9f-bebtq`: its ReplicaSet's hash, then five characters).
  const host = /[.:]\w|-\d+$|^[a-z][\w-]*-(?:(?=[a-z0-9]*\d)[a-z0-9]{4,}|[b-df-hj-np-tv-z2-9]{5}|[a-z0-9]*\d[a-z0-9]*-[a-z0-9]{5})$/i.test(value);
  if (host && (words.some((w) => w === "serving" || w === "served") || (words.length === 1 && ["upstream", "backend", "replica"].includes(words[0]!)))) return true;
  if (name === "TTL" && /^\d+$/.test(value)) return true;
  // A time measured to a fraction (PostgreSQL's `actual time=0.050..1.465`): how long this run took.
  if (words.some((w) => w === "time" || w === "duration") && /^\d+\.\d+(?:\.\.\d+\.\d+)?$/.test(value)) return true;
  if (words.at(-1) === "token" && words.some((w) => REISSUED.has(w))) return true;
  // A nonce is used once by definition.
  if (words.includes("nonce")) return true;
  // Which build of the server answered (OpenAI's `system_fingerprint`); a certificate's or a key's is their own.
  if (words.length === 2 && words[0] === "system" && words[1] === "fingerprint") return true;
  // Epoch seconds or milliseconds in a field named for a time ("ts", "as_of", "serverTimeMs", "_fetched").
  return epoch && (words.some((w) => TIME.has(w)) || after("as", "of"));
}

/**
 * An id minted for one occurrence (a request id, a trace id): a word of 8 characters or more (`MINTED_CANDIDATE`)
 * whose letters and digits alternate at least four times, as random ids do and names ("order_1051", "utf8",
 * "sha256sum", "v1.2.3-beta4") do not; in a word of both cases and digits that reads as no name, upper and lower case
 * alternate too. Parts joined by slashes count when one of them is such an id.
 */
function mintedId(candidate: string): boolean {
  // Base64 of 16 characters or more, both cases and a digit, with its pluses or its closing "=": random bytes.
  if (candidate.length >= 16 && /^[A-Za-z0-9+/]+=*$/.test(candidate) && /[+=]/.test(candidate) && /[a-z]/.test(candidate) && /[A-Z]/.test(candidate) && /\d/.test(candidate)) return true;
  // A path's segments are read one by one: "/out/v2/run7/ckpt3" is no id, though its letters and digits alternate.
  return candidate.includes("/") ? candidate.split("/").some(mintedWord) : mintedWord(candidate);
}

function mintedWord(word: string): boolean {
  if (word.length < 8) return false;
  // Hex of 8 or more, letters and digits both, bare or after a short prefix (`d584871df270`, `TS-dd46514dfa90`,
  // `req_9a30…`): random bytes, as most of them already read by their alternations.
  if (/^(?:[A-Za-z]{1,8}[-_])?(?=[0-9a-f]*[a-f])(?=(?:[a-f]*\d){2})[0-9a-f]{8,}$/.test(word)) return true;
  // Base62 of 12 characters or more changes between digit, upper and lower case at most steps, as random text does
  // (about 6 steps in 10); a name in camel case, at a syllable's end (about 2 in 10).
  for (const part of word.split(/[_.-]/)) {
    if (part.length < 12 || !/^[A-Za-z0-9]+$/.test(part) || !/[a-z]/.test(part) || !/[A-Z]/.test(part)) continue;
    const cls = (c: string) => (/\d/.test(c) ? 0 : /[a-z]/.test(c) ? 1 : 2);
    let steps = 0;
    for (let i = 1; i < part.length; i++) if (cls(part[i - 1]!) !== cls(part[i]!)) steps++;
    if (steps >= 0.45 * (part.length - 1)) return true;
  }
  // Base62 and base64 ids mix both cases with digits ("fKSQP2LU21"): there a change of case is a change of kind too;
  // not in a name, whose lower-case runs are syllables ("Route53HostedZone") and whose digits are few.
  const mixed = /[a-z]/.test(word) && /[A-Z]/.test(word) && /\d/.test(word) && ((word.match(/\d/g) ?? []).length >= 3 || !/[a-z]{3}/.test(word));
  const kind = (c: string) => (/\d/.test(c) ? 0 : /[a-z]/.test(c) ? 1 : /[A-Z]/.test(c) ? (mixed ? 2 : 1) : -1);
  let changes = 0;
  for (let i = 1; i < word.length; i++) {
    const [a, b] = [kind(word[i - 1]!), kind(word[i]!)];
    if (a >= 0 && b >= 0 && a !== b) changes++;
  }
  return changes >= 4;
}

/**
 * A word that may be a minted id: 8 characters or more, dots and dashes included, and parts joined by colons, pluses
 * or base64's slashes, with its closing `=` (a GitHub request id `C1A4:2B7F1:9E3D2A:A1F0C3`, an S3 host id
 * `tPq3eK0z1mXo8Jc4+R7k9a0==`, a CSRF token `giLzupcy8WrkFx/ewAFZMa0K2`).
 */
const MINTED_CANDIDATE = /(?<![+/])[+/]*[\w.-]+(?:[:+/]+[\w.-]+)*[+/]*=*/g;

/** A table's column of ages (kubectl's and Docker's `AGE`, an event list's `Age`): how long ago, which moves as the state stands. */
const AGE_HEADER = /^[^\n]*(?:\S[ \t]{2,}|^[ \t]*)(?:AGE|Age|LAST SEEN)(?:[ \t]{2,}|$)/m;
/** A duration as Go prints it (`5m`, `5m50s`, `2d3h`, `40m`): a number and a one-letter unit, once or twice over. */
const SHORT_DURATION = /(?<![\w.:/-])\d+[smhd](?:\d+[smh])?(?![\w.:/-])/g;

function maskAges(result: string): string {
  return AGE_HEADER.test(result) ? result.replace(SHORT_DURATION, "·") : result;
}

/**
 * An HTTP response's header block, after its status line (`HTTP/1.1 200 OK`, `HTTP/2 429`) and up to the blank line,
 * or header lines with an HTTP `Date` among them. What HTTP says there of the exchange rather than the resource is an
 * occurrence mark (`EXCHANGE_HEADER`: when, who served it, how long it took, which request, what quota, when to try
 * again); every other header, and the status line, is compared (`x-ms-copy-status`, `x-amz-restore`, `Range` report
 * progress).
 */
const HTTP_HEAD = /^HTTP\/\d(?:\.\d)? \d{3}[^\n]*\n(?:[!#$%&'*+.^`|~\w-]+:[^\n]*(?:\n|$))+/gm;
/** Header lines in a row, one of them an HTTP `Date` (gRPC's metadata as grpcurl prints it, a response without its status line). */
const HEADER_LINES = /^(?:[!#$%&'*+.^`|~\w-]+: [^\n]*(?:\n|$)){2,}/gm;
/**
 * Header lines that open a result and end at a blank line before its body, one of them an extension header (`x-…`), a
 * vendor's request id (`Twilio-Request-Id`) or one only HTTP sends (`Content-Type`, `Cache-Control`, `ETag`): a
 * response's head without its status line. A config's or a YAML document's `quota: 10Gi` lines are no head.
 */
const LEADING_HEAD = /^(?:[!#$%&'*+.^`|~\w-]+: [^\n]*\n){2,}(?=\r?\n)/;
const HTTP_ONLY_HEADER = /^(?:x-[\w-]+|[\w-]+-request-id|content-type|content-length|cache-control|etag|vary|strict-transport-security|access-control-[\w-]+):/im;
const HTTP_DATE = /^date: \w{3}, \d{1,2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT\s*$/im;
const EXCHANGE_HEADER = /^(?:date|age|via|server|expires|retry-after|alt-svc|report-to|nel|x-cache|x-cache-hits|cf-ray|cf-cache-status|x-served-by|x-runtime|x-response-time|x-envoy-upstream-service-time|server-timing|x-timer)$|request-?id|trace|correlation|(?:^|-)span|rate-?limit|-limit(?:-|$)|amz-cf-|(?:^|-)(?:routing|served|upstream)-|(?:^|-)server-id$|(?:^|-)quota-(?:remaining|used|resets?)(?:-|$)/i;
/** Headers that measure the exchange when they hold a number: how long it took, how many ran at once, when the server last heard from its leader (`x-ms-lease-duration: fixed` is the resource's). */
const EXCHANGE_MEASURE = /(?:^|-)(?:duration|latency|elapsed|lastcontact|concurrent)(?:-|$)/i;

function maskHttpHeads(result: string): string {
  const exchange = (head: string) =>
    head.replace(/^([!#$%&'*+.^`|~\w-]+):([^\n]*)/gm, (line, name: string, value: string) => (EXCHANGE_HEADER.test(name) || (EXCHANGE_MEASURE.test(name) && /^\s*\d/.test(value)) ? `${name}: ·` : line));
  const headed = result.replace(HTTP_HEAD, exchange).replace(LEADING_HEAD, (head) => (HTTP_ONLY_HEADER.test(head) ? exchange(head) : head));
  return headed.replace(HEADER_LINES, (lines) => (HTTP_DATE.test(lines) ? exchange(lines) : lines));
}

/** A step's line in BuildKit's plain progress (`#8 12.55 Collecting bcrypt`): seconds since the build began. */
const BUILDKIT_LINE = /^(#\d+ )\d+\.\d+(?= )/gm;
/** BuildKit's plain progress names its steps (`#5 [2/4] RUN …`, `#5 DONE 2.3s`): a ranking's `#1 4.8 …` does not. */
const BUILDKIT_STEP = /^#\d+ (?:\[|DONE\b|CACHED\b|ERROR\b)/m;

/** dig's answer section: a record set has no order (RFC 2181 §5), and servers rotate it from one answer to the next. */
const DNS_ANSWER = /^(;; ANSWER SECTION:\n)((?:[^\n;][^\n]*(?:\n(?=[^\n;])|$))+)/gm;
/** A DNS record as dig prints it (`api.example.	248	IN	CNAME	…`): its TTL is how long a cache still keeps it. */
const DNS_RECORD = /^(\S+\.\s+)\d+(?=\s+IN\s+[A-Z]+\b)/gm;

/**
 * What a JSON body says of the call rather than the resource: the quota it used (GitHub's `rateLimit`, Shopify's
 * `throttleStatus`, any object named for a rate limit or a throttle) and a GraphQL response's top-level `extensions`
 * (the spec's slot for what a server adds about the request: its cost, its tracing). Their values are masked; the
 * body is compared with its keys sorted and no white space, so the same document printed otherwise is the same.
 * A result whose JSON follows a header block (an HTTP response) is read from its first blank line.
 */
function maskJsonExchange(result: string): string {
  const start = /^[[{]/.test(result) ? 0 : result.search(/\r?\n\r?\n[[{]/);
  if (start < 0) return result;
  // In place, over what JSON.parse just made: a 1 MB body is walked in milliseconds. Objects without a prototype, so
  // a `__proto__` key is a key like any other.
  // `timed`: inside a block named for how long the call took, whose numbers are the call's, not the resource's.
  const masked = (value: unknown, exchange: boolean, top: boolean, timed = false): unknown => {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = masked(value[i], exchange, false, timed);
      return value;
    }
    // A command's output carried in a JSON string (`{"stdout": "NAME  AGE\n…"}`) is text, read as lines like any other.
    if (typeof value === "string" && value.includes("\n")) return exchange ? "·" : maskLines(value);
    if (value === null || typeof value !== "object") return exchange || (timed && typeof value === "number") ? "·" : value;
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object).sort();
    // A GraphQL response is `data`, `errors` and `extensions` and nothing else, its extensions an object.
    const graphql = top && keys.every((key) => GRAPHQL_KEYS.has(key)) && isObject(object.extensions);
    const sorted: Record<string, unknown> = Object.create(null);
    for (const key of keys) {
      const block = isObject(object[key]);
      const quota = block && namesQuota(key);
      // A block named for how long the call took (Algolia's `processingTimingsMS`): its numbers, whatever their names.
      sorted[key] = masked(object[key], exchange || (graphql && key === "extensions") || quota, false, timed || (block && namesCallDuration(key)));
    }
    return sorted;
  };
  const body = result.slice(start);
  try {
    let parsed: unknown = JSON.parse(body);
    // A number of 16 digits or more would come back rounded (two snowflake ids read as one): it is read as its digits.
    // Only in a body that parsed, whose strings all close, so the scan is linear.
    if (/\d{16}/.test(body)) parsed = JSON.parse(body.replace(JSON_TOKEN, (token) => (token.startsWith('"') || token.replace(/\D/g, "").length < 16 ? token : `"${token}"`)));
    return `${result.slice(0, start)}${start ? "\n\n" : ""}${JSON.stringify(masked(parsed, false, true))}`;
  } catch {
    // Not JSON, or nested deeper than a walk may go: compared as text.
    return result;
  }
}

/** A JSON string, or a whole number token (its fraction and exponent with it). */
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;
const GRAPHQL_KEYS = new Set(["data", "errors", "extensions"]);
const isObject = (value: unknown): boolean => value !== null && typeof value === "object" && !Array.isArray(value);

/** A name for how long the call took, in a unit finer than a second (`processingTimingsMS`, `query_time_ms`). */
function namesCallDuration(name: string): boolean {
  const words = nameWords(name);
  return TIME_UNIT.has(words.at(-1)!) && words.some((w) => CALL_TIME_WORD.has(w));
}

/** A key naming a quota block (`rateLimit`, `throttleStatus`); it counts only where it holds an object of counters. */
function namesQuota(key: string): boolean {
  if (!/rate|throttl/i.test(key)) return false;
  const words = nameWords(key);
  return words.includes("ratelimit") || words.some((w, k) => w === "rate" && words[k + 1] === "limit") || words.some((w) => w === "throttle" || w === "throttling");
}

/** What lines of output say of the occurrence: ages in a table, a response's exchange headers, DNS TTLs, BuildKit's clock. */
function maskLines(text: string): string {
  const headed = maskHttpHeads(maskAges(text)).replace(DNS_RECORD, "$1·").replace(DNS_ANSWER, (_, head: string, records: string) => head + records.split("\n").sort().join("\n"));
  return BUILDKIT_STEP.test(headed) ? headed.replace(BUILDKIT_LINE, "$1·") : headed;
}

/**
 * A result as compared: occurrence marks masked, white space at its ends aside and runs of spaces and tabs inside a
 * line as one; a result that is only marks (a clock's) is its own outcome.
 */
export function canonicalResult(result: string): string {
  const trimmed = maskJsonExchange(maskLines(result.trim()));
  // The name is read whole, never given back a character at a time (a lookahead's capture is atomic). A name set
  // apart from its number by spaces only is a field when its name ends in a unit (`duration_ms 51.490`): prose
  // ("served 120 requests", "age 34") is not.
  const field = (name: string, lead: string) => /[:=]/.test(lead) || TIME_UNIT.has(nameWords(name).at(-1)!);
  const named = trimmed.replace(FIELD, (all, quote: string, name: string, lead: string, value: string) => (field(name, lead) && namedOccurrence(name, value) ? `${quote}${name}${quote}${lead}·` : all));
  const masked = named.replace(OCCURRENCE, "·").replace(MINTED_CANDIDATE, (word) => (mintedId(word) ? "·" : word));
  // Runs of white space inside a line are layout: a table's columns widen with what a masked cell held ("Up About a
  // minute" → "·"). A line's indentation is its structure (YAML, Python), and stays.
  return /[\p{L}\p{N}]/u.test(masked) ? masked.replace(/(?<=\S)[ \t]+/g, " ") : trimmed;
}

/**
 * Results as compared, remembered: a conversation's turns read the same stored results again and again, and masking a
 * result is a few passes over it. The oldest go first past `chars` characters of results remembered.
 */
export class CanonicalResults {
  private readonly known = new Map<string, string>();
  private chars = 0;

  constructor(private readonly limit = { chars: 2_000_000 }) {}

  readonly of = (result: string): string => {
    const known = this.known.get(result);
    if (known !== undefined) return known;
    const canonical = canonicalResult(result);
    if (result.length > this.limit.chars) return canonical;
    this.known.set(result, canonical);
    this.chars += result.length;
    for (const [oldest] of this.known) {
      if (this.chars <= this.limit.chars) break;
      this.known.delete(oldest);
      this.chars -= oldest.length;
    }
    return canonical;
  };

  /** Characters of results remembered. */
  get size(): number {
    return this.chars;
  }
}

/**
 * The loops in a sequence of calls, in the order they became loops. A batch has no order of its own: a call is
 * repeated in a row when each of consecutive messages makes it, whatever else they make beside it; a cycle reads
 * each batch in a canonical order (`cycleOrder`), so a batch made again in another order or beside other calls is
 * the same batch, and one made again in part (polling several things, one of which changed) is no cycle of the part
 * that did not change. A run that goes on is one loop,
 * however long; a run broken and started again is another. A run of one call repeated is counted at period 1 only,
 * never again as a longer cycle. Positions in the answer are the caller's.
 */
export function findLoops(calls: readonly CallRecord[], options: Partial<LoopOptions> = {}): Loop[] {
  const { repeats, maxPeriod, acts, canonical } = { ...LOOP_DEFAULTS, ...options };
  if (repeats < 2) return [];
  const batches = batchesOf(calls);
  const asked = calls.map((call) => JSON.stringify([call.name, canonicalArgs(call.args)]));
  const made = new Map<string, number>();
  for (const call of asked) made.set(call, (made.get(call) ?? 0) + 1);
  const kept = batches.map((batch) => withoutOneOffsBeside(batch, asked, made, (i) => acts(calls[i]!.name)));
  // New work: a batch whose calls a cycle keeps include a call made once (a batch of nothing but one-offs, or an acting one).
  const newWork = kept.map((batch) => batch.some((i) => made.get(asked[i]!) === 1));
  const { results, prints, alike } = fingerprintsOverSeries(calls, asked, batches, newWork, canonical);
  // How a loop's own calls differed, when they did: a call beside them, or an identical tail of a noisy series, says nothing.
  const alikeOf = (members: readonly number[]): Alike[] | undefined => {
    const byCall = new Map<string, number[]>();
    for (const i of members) byCall.set(asked[i]!, [...(byCall.get(asked[i]!) ?? []), i]);
    const differed = [...byCall.values()].filter((same) => same.some((i) => results[i] !== results[same[0]!]));
    const kinds = new Set(differed.flat().flatMap((i) => alike.get(i) ?? []));
    return kinds.size ? (["numbers", "order"] as const).filter((kind) => kinds.has(kind)) : undefined;
  };
  const withAlike = (loop: Loop, members: readonly number[]): Loop => {
    const kinds = alikeOf(members);
    return kinds ? { ...loop, alike: kinds } : loop;
  };
  const found = repeatsInARow(calls, prints, batches, repeats).map(({ loop, members }) => withAlike(loop, members));
  const order = cycleOrder(kept, prints);
  const fps = order.map((i) => prints[i]!);
  const batchAt = batchStarts(order.map((i) => calls[i]!.message));
  const longest = Math.max(maxPeriod, ...batches.map((b) => b.length));
  for (let period = 2; period <= longest; period++) {
    let start = 0;
    for (let j = period; j <= fps.length; j++) {
      if (j < fps.length && fps[j] === fps[j - period]) continue;
      // The run [start, j - 1] is periodic with this period. Past maxPeriod only a whole batch counts as a cycle.
      const length = j - start;
      const needed = Math.max(2 * period, period + repeats - 1);
      if ((period <= maxPeriod || batchAt.get(start) === period) && length >= needed) {
        const block = fps.slice(start, start + period);
        // A block that repeats within itself (A-A, A-B-A-B) is a shorter period's loop.
        const primitive = !Array.from({ length: period - 1 }, (_, i) => i + 1).some((q) => period % q === 0 && block.every((f, i) => f === block[i % q]));
        const span = order.slice(start, j);
        // It became a loop when the last of the calls up to the threshold had its result, whatever their order in a batch.
        const firedAt = Math.max(...order.slice(start, start + needed));
        const covered = found.some((l) => firedAt >= l.start && firedAt <= l.end);
        if (primitive && !covered) {
          const tools = order.slice(start, start + period).map((i) => calls[i]!.name);
          found.push(withAlike({ start: Math.min(...span), end: Math.max(...span), firedAt, period, tools, repeats: Math.floor(length / period), wasted: length - period }, span));
        }
      }
      // The next run starts period calls back from the break: those calls are trivially periodic.
      start = j - period + 1;
    }
  }
  return found.sort((a, b) => a.firedAt - b.firedAt);
}

/** A call made in each of `repeats` consecutive messages (or, without messages, consecutive calls): a period-1 loop, with its calls. */
function repeatsInARow(calls: readonly CallRecord[], prints: readonly string[], batches: readonly number[][], repeats: number): { loop: Loop; members: number[] }[] {
  const loops: { loop: Loop; members: number[] }[] = [];
  // Per fingerprint: the positions of its current run, one per consecutive batch.
  let runs = new Map<string, number[]>();
  const close = (run: number[]) => {
    if (run.length < repeats) return;
    const firedAt = run[repeats - 1]!;
    loops.push({ loop: { start: run[0]!, end: run.at(-1)!, firedAt, period: 1, tools: [calls[firedAt]!.name], repeats: run.length, wasted: run.length - 1 }, members: run });
  };
  for (const batch of batches) {
    const next = new Map<string, number[]>();
    // The same call twice in one batch is made twice: each counts.
    for (const i of batch) next.set(prints[i]!, [...(next.get(prints[i]!) ?? runs.get(prints[i]!) ?? []), i]);
    for (const [print, run] of runs) if (!next.has(print)) close(run);
    runs = next;
  }
  for (const run of runs.values()) close(run);
  return loops;
}

/**
 * A batch as a cycle reads it: a call asked once in the whole window (tool and arguments), beside calls asked again, is
 * new work done alongside the cycle, not a step of it (A+X, B+Y, A+Z, B+W is A-B-A-B), as a call repeated in a row is
 * repeated whatever else its messages make. A call asked again with another result (a poll that moved) stays, and so
 * does a batch of nothing but one-offs: a step of new work breaks a cycle. A one-off of a tool known to act (writing
 * the next cell, sending the next message) is progress and stays, so the cycle beside it is broken.
 */
function withoutOneOffsBeside(batch: readonly number[], asked: readonly string[], made: ReadonlyMap<string, number>, acts: (i: number) => boolean): number[] {
  const kept = batch.filter((i) => made.get(asked[i]!)! > 1 || acts(i));
  return kept.length ? kept : [...batch];
}

/** Positions grouped by the message that made them (a call without one is a batch of its own). */
function batchesOf(calls: readonly CallRecord[]): number[][] {
  const batches: number[][] = [];
  calls.forEach((call, i) => {
    const last = batches.at(-1);
    if (last && call.message !== undefined && calls[last[0]!]!.message === call.message) last.push(i);
    else batches.push([i]);
  });
  return batches;
}

/**
 * Each batch in a canonical order: the calls the batch before also made first, in that batch's order, then the rest
 * sorted by fingerprint. A batch made again, in any order and with other calls beside it, then follows itself.
 */
function cycleOrder(batches: readonly number[][], prints: readonly string[]): number[] {
  const order: number[] = [];
  const byPrint = (a: number, b: number) => (prints[a]! < prints[b]! ? -1 : prints[a]! > prints[b]! ? 1 : a - b);
  batches.forEach((batch, b) => {
    const before = new Map((b > 0 ? order.slice(-batches[b - 1]!.length) : []).map((i, rank) => [prints[i]!, rank]));
    const rank = (i: number) => before.get(prints[i]!) ?? Infinity;
    order.push(...[...batch].sort((x, y) => rank(x) - rank(y) || byPrint(x, y)));
  });
  return order;
}

/** Where each batch of two calls or more starts (in the order compared), and its size. */
function batchStarts(messages: readonly (number | undefined)[]): Map<number, number> {
  const starts = new Map<number, number>();
  let from = 0;
  for (let i = 1; i <= messages.length; i++) {
    if (i < messages.length && messages[i] !== undefined && messages[i] === messages[from]) continue;
    if (i - from > 1) starts.set(from, i - from);
    from = i;
  }
  return starts;
}

/**
 * A number, as a slot of a result's skeleton: a clock reading (`11:55:40`, `0:00:03.240`, `68:27`), read whole in
 * seconds; a decimal (`9.42`); or a run of digits. A dotted run of three parts or more (a version `1.9.0`, an address
 * `10.0.2.11`) is read part by part. Signs and other separators stay in the skeleton, so an array's items are numbers
 * of their own.
 */
const NUMBER = /\d+(?::\d{2}(?!\d))+(?:\.\d+)?|(?<![\d.])\d+\.\d+(?![.\d])|\d+/g;

/** A number's value: a clock reading in seconds; null when too long to read exactly (an id, not a measure). */
function valueOf(token: string): number | null {
  const [whole = "", fraction] = token.split(".");
  const value = whole.split(":").reduce((sum, part) => sum * 60 + Number(part), 0) + (fraction ? Number(`0.${fraction}`) : 0);
  return value <= Number.MAX_SAFE_INTEGER ? value : null;
}

/** How far two readings of one number may lie apart, relative to the larger, and still read as the same state. */
const SAME_READING = 0.02;
/** How far two readings of a clock may lie apart, in seconds, and still read as the same state. */
const SAME_CLOCK = 60;
/** A day in seconds. */
const DAY = 86_400;

/**
 * Whether the results of one call, read in order, differ only in numbers that are noise. A number that changed twice
 * or more must have turned back (up then down, or down then up): progress moves one way (a count up, a remainder down),
 * noise both (a latency, a gauge, a sampled CPU). A number that changed once shows no direction: it is noise when it
 * moved by less than `SAME_READING` of the larger (a sampled temperature 9.42 and 9.27, a PID, a counter others feed, a
 * number minted per occurrence), or a clock by less than `SAME_CLOCK` seconds; a change when it moved more (2 → 3
 * replicas, 19.4 → 20.3 °C).
 * Blind corpora show the former far more often than a state that moves by a hair; when one does (a port 8080 → 8081, a
 * job 1 % further on, read twice), it reads as noise. A number too long to read exactly that changed is a change.
 */
function differOnlyInNoise(read: readonly string[]): boolean {
  const skeleton = read[0]!.replace(NUMBER, "#");
  if (read.some((result) => result.replace(NUMBER, "#") !== skeleton)) return false;
  const tokens = read.map((result) => result.match(NUMBER) ?? []);
  let moved = false;
  for (let slot = 0; slot < tokens[0]!.length; slot++) {
    const slotTokens = tokens.map((ts) => ts[slot]!);
    if (slotTokens.every((t) => t === slotTokens[0])) continue;
    const clock = slotTokens[0]!.includes(":");
    const values: number[] = [];
    for (const token of slotTokens) {
      let value = valueOf(token);
      if (value === null) return false;
      const last = values.at(-1);
      // A time of day that goes back by more than half a day has passed midnight.
      if (clock && last !== undefined && last < DAY && value < DAY && last - value > DAY / 2) value += DAY;
      values.push(value);
    }
    const steps = values.slice(1).map((v, k) => [values[k]!, v] as const).filter(([a, b]) => a !== b);
    if (steps.length === 1) {
      const [a, b] = steps[0]!;
      if (Math.abs(a - b) >= (clock ? SAME_CLOCK : SAME_READING * Math.max(Math.abs(a), Math.abs(b)))) return false;
    } else {
      const moves = steps.map(([a, b]) => Math.sign(b - a));
      if (!moves.slice(1).some((d, k) => d !== moves[k])) return false;
    }
    moved = true;
  }
  return moved;
}

/**
 * Whether two results hold the same lines in another order (a set's members, rows without an ORDER BY, a plan's refresh
 * lines as they finish). Only when no line is indented (an indented line belongs to the record above it: a YAML item's
 * fields) and each line with words in it is there once: a masked table's rows alike ("· 1/1 Running") have lost what
 * told them apart, and their order is all that is left of it. Lines are compared exactly but for the padding at their ends.
 */
function sameLinesReordered(a: string, b: string): boolean {
  const linesOf = (result: string) => result.split("\n").map((line) => line.replace(/[ \t]+$/, ""));
  const [x, y] = [linesOf(a), linesOf(b)];
  if (x.some((line) => /^[ \t]/.test(line))) return false;
  const worded = x.filter((line) => /[\p{L}\p{N}]/u.test(line));
  if (new Set(worded).size !== worded.length) return false;
  return x.sort().join("\n") === y.sort().join("\n");
}

/**
 * A call's series: the same call (tool and arguments) within one user turn, once per batch, in order, whatever was
 * called between or beside it, but not across new work: a user's message, or a batch of nothing but calls made once in
 * the window (a restart, a write, a step of its own) or holding a one-off of a tool known to act, ends every series
 * open, as it breaks a cycle (`withoutOneOffsBeside`).
 */
function seriesOf(calls: readonly CallRecord[], asked: readonly string[], batches: readonly number[][], newWork: readonly boolean[]): number[][] {
  const done: number[][] = [];
  let open = new Map<string, number[]>();
  let turn: number | undefined;
  const close = () => {
    for (const series of open.values()) done.push(series);
    open = new Map();
  };
  batches.forEach((batch, b) => {
    if (calls[batch[0]!]!.userTurn !== turn || newWork[b]) close();
    turn = calls[batch[0]!]!.userTurn;
    const inBatch = new Set<string>();
    for (const i of batch) {
      if (inBatch.has(asked[i]!)) continue;
      inBatch.add(asked[i]!);
      const list = open.get(asked[i]!);
      if (list) list.push(i);
      else open.set(asked[i]!, [i]);
    }
  });
  close();
  return done;
}

/**
 * Each call's canonical result and fingerprint, its results read over its series (`seriesOf`): results that differ
 * only in numbers that are noise (`differOnlyInNoise`) are one outcome, and so are two in a row that hold the same
 * lines in another order (`sameLinesReordered`); `alike` says which calls were read so, and how. Progress that dips
 * and recovers within three calls (a rollout's ready replicas 2, 1, 3), random draws and a state read twice a hair
 * apart read as noise too: the note then says how the results differed, which is what the model saw.
 */
function fingerprintsOverSeries(calls: readonly CallRecord[], asked: readonly string[], batches: readonly number[][], newWork: readonly boolean[], canonical: (result: string) => string): { results: (string | null)[]; prints: string[]; alike: Map<number, Alike> } {
  const results = calls.map((call) => (call.result === null ? null : canonical(call.result)));
  const prints = results.map((result, i) => JSON.stringify([asked[i], result]));
  const alike = new Map<number, Alike>();
  seriesOf(calls, asked, batches, newWork).forEach((series, n) => {
    const read = series.map((i) => results[i]);
    if (read.some((result) => result === null) || read.every((result) => result === read[0])) return;
    if (differOnlyInNoise(read as string[])) {
      // The series' number too: results read as one outcome here are not one with a series read apart.
      const skeleton = read[0]!.replace(NUMBER, "#");
      for (const i of series) {
        prints[i] = JSON.stringify([asked[i], skeleton, n]);
        alike.set(i, "numbers");
      }
      return;
    }
    for (let k = 1; k < series.length; k++) {
      const [a, b] = [series[k - 1]!, series[k]!];
      if (prints[a] === prints[b] || !sameLinesReordered(results[a]!, results[b]!)) continue;
      prints[b] = prints[a]!;
      alike.set(a, alike.get(a) ?? "order");
      alike.set(b, "order");
    }
  });
  return { results, prints, alike };
}
