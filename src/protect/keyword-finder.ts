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
  /** next[state * 128 + code]: the state after reading `code` (a DFA, failure links folded in). */
  private readonly next: Int32Array;
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
    this.next = next;
    this.endings = endings;
  }

  /** Where each keyword starts in `text`, in increasing order; keywords that never occur are absent. */
  find(text: string): Map<string, number[]> {
    const found = new Map<string, number[]>();
    const next = this.next;
    const endings = this.endings;
    let state = 0;
    for (let i = 0; i < text.length; i++) {
      let code = text.charCodeAt(i);
      if (code >= ALPHABET) {
        state = 0;
        continue;
      }
      if (code >= 65 && code <= 90) code += 32;
      state = next[state * ALPHABET + code]!;
      const ended = endings[state];
      if (ended) {
        for (const keyword of ended) {
          const list = found.get(keyword);
          if (list === undefined) found.set(keyword, [i + 1 - keyword.length]);
          else list.push(i + 1 - keyword.length);
        }
      }
    }
    return found;
  }
}
