/**
 * The folded view: escapes decoded (`%67`, `\u0067`, `\x67`, `&#103;`),
 * invisible characters dropped (ZWSP, ZWJ, WJ, SHY, CGJ, bidi controls) and
 * look-alike letters read as the ASCII they imitate (Cyrillic `р`, full-width
 * `ｇ`), so `gh\u200bp_…` or `%67hp_…` reads `ghp_…`. Case is kept: issuers'
 * prefixes are case-sensitive. Only windows around a non-ASCII character or
 * an escape are folded; a plain ASCII log costs one regex search.
 */
import { foldText } from "../core/folded-view";
import { shiftView, type DerivedView } from "./view";
import { matchRanges, windowsAround } from "./windows";

const TRIGGER = /[^\x00-\x7f]|\\(?:u[0-9a-fA-F{]|x[0-9a-fA-F])|%[0-7][0-9a-fA-F]|&#?[A-Za-z0-9]{2,8};/g;
const RADIUS = 512;

export function foldedViews(text: string): DerivedView[] {
  return windowsAround(text, matchRanges(text, TRIGGER), RADIUS).map(([from, to]) => shiftView(foldText(text.slice(from, to), { keepCase: true, decodeEscapes: true }), from));
}
