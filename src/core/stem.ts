/**
 * A light suffix stripper, applied alike to what is searched (the tool catalog, the history) and to queries, so only
 * agreement matters: plurals, -ing and -ed go, and a final -e goes too so that "share", "shared" and "sharing" meet
 * at "shar".
 */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(?:ss|x|z|ch|sh)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 6 && w.endsWith("ing")) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith("ied")) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && w.endsWith("ed")) w = undouble(w.slice(0, -2));
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

/** "runn" → "run", "stopp" → "stop"; but "add" (from "added") stays, as do "call", "press" and "buzz". */
function undouble(w: string): string {
  const last = w[w.length - 1];
  return w.length > 3 && last === w[w.length - 2] && !"lsz".includes(last!) ? w.slice(0, -1) : w;
}
