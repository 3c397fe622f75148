/**
 * Finds every occurrence of a fixed set of lower-case ASCII keywords in a
 * text, case-insensitively, in one pass: an Aho-Corasick automaton compiled
 * to a table, one lookup per character. (An alternation of ninety literals in
 * one regular expression costs several times as much on a log, and
 * lower-casing the text first would move offsets where a character's lower
 * case is longer.)
 */
const ALPHABET = 128;

export class KeywordFinder {
  /**
   * rows[row + symbol]: the row (state × width) after reading a character, a DFA with failure links folded in;
   * bit-inverted (negative) when keywords end in that state, so the per-character loop needs no other lookup.
   */
  private readonly rows: Int32Array;
  /** Each UTF-16 code unit's symbol: its place among the characters keywords use (either case), 0 for the rest. */
  private readonly symbols: Uint8Array;
  private readonly width: number;
  /** For each state, the keywords that end there (its own and those of its failure chain). */
  private readonly endings: (readonly string[] | null)[];

  constructor(keywords: readonly string[]) {
    const children: Map<number, number>[] = [new Map()];
    const own: string[][] = [[]];
    for (const keyword of keywords) {
      let state = 0;
      for (let i = 0; i < keyword.length; i++) {
        const code = keyword.charCodeAt(i);
        if (code >= ALPHABET || (code >= 65 && code <= 90)) throw new Error(`KeywordFinder: "${keyword}" is not lower-case ASCII`);
        let child = children[state]!.get(code);
        if (child === undefined) {
          child = children.length;
          children.push(new Map());
          own.push([]);
          children[state]!.set(code, child);
        }
        state = child;
      }
      own[state]!.push(keyword);
    }
    const next = new Int32Array(children.length * ALPHABET);
    const fail = new Int32Array(children.length);
    const endings: (string[] | null)[] = own.map((list) => (list.length > 0 ? [...list] : null));
    // Breadth first, so a state's failure target is complete before the state is.
    const queue: number[] = [];
    for (let code = 0; code < ALPHABET; code++) {
      const child = children[0]!.get(code);
      if (child !== undefined) queue.push(child);
      next[code] = child ?? 0;
    }
    for (let head = 0; head < queue.length; head++) {
      const state = queue[head]!;
      const inherited = endings[fail[state]!];
      if (inherited) endings[state] = [...(endings[state] ?? []), ...inherited];
      for (let code = 0; code < ALPHABET; code++) {
        const child = children[state]!.get(code);
        if (child === undefined) next[state * ALPHABET + code] = next[fail[state]! * ALPHABET + code]!;
        else {
          fail[child] = next[fail[state]! * ALPHABET + code]!;
          next[state * ALPHABET + code] = child;
          queue.push(child);
        }
      }
    }
    this.endings = endings;
    // Compact the table to the characters keywords use (upper case read as lower, all others as symbol 0), so
    // it stays small enough for the processor's cache.
    const used = [...new Set(keywords.join(""))].map((char) => char.charCodeAt(0));
    const width = used.length + 1;
    this.width = width;
    this.symbols = new Uint8Array(65536);
    used.forEach((code, index) => {
      this.symbols[code] = index + 1;
      if (code >= 97 && code <= 122) this.symbols[code - 32] = index + 1;
    });
    const outside = [...Array(ALPHABET).keys()].find((code) => this.symbols[code] === 0)!;
    const row = (state: number) => (endings[state] === null ? state * width : ~(state * width));
    this.rows = new Int32Array(children.length * width);
    for (let state = 0; state < children.length; state++) {
      this.rows[state * width] = row(next[state * ALPHABET + outside]!);
      used.forEach((code, index) => (this.rows[state * width + index + 1] = row(next[state * ALPHABET + code]!)));
    }
  }

  /** Where each keyword starts in a text, given as its code units, in increasing order; keywords that never occur are absent. */
  find(codes: Uint16Array): Map<string, number[]> {
    const found = new Map<string, number[]>();
    const rows = this.rows;
    const symbols = this.symbols;
    const length = codes.length;
    let row = 0;
    for (let i = 0; i < length; i++) {
      // A character no keyword has (symbol 0, non-ASCII too) leads where any such character does.
      const next = rows[row + symbols[codes[i]!]!]!;
      if (next >= 0) row = next;
      else {
        row = ~next;
        this.record(found, row / this.width, i);
      }
    }
    return found;
  }

  private record(found: Map<string, number[]>, state: number, at: number): void {
    for (const keyword of this.endings[state]!) {
      const list = found.get(keyword);
      if (list === undefined) found.set(keyword, [at + 1 - keyword.length]);
      else list.push(at + 1 - keyword.length);
    }
  }
}
