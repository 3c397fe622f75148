/**
 * The folded view: escapes decoded (`%67`, `\u0067`, `\x67`, `&#103;`),
 * invisible characters dropped (ZWSP, ZWJ, WJ, SHY, CGJ, bidi controls) and
 * look-alike letters read as the ASCII they imitate (Cyrillic `р`, full-width
 * `ｇ`), so `gh\u200bp_…` or `%67hp_…` reads `ghp_…`. Case is kept: issuers'
 * prefixes are case-sensitive. Only windows around a non-ASCII character or
 * an escape (found by the shared pass over the text) are folded.
 */
import { foldText } from "../core/folded-view";
import { shiftView, type DerivedView } from "./view";
import { textRuns } from "./text-runs";
import { windowsAround } from "./windows";

const RADIUS = 512;

export function foldedViews(text: string): DerivedView[] {
  return windowsAround(text, textRuns(text).foldable, RADIUS).map(([from, to]) => shiftView(foldText(text.slice(from, to), { keepCase: true, decodeEscapes: true }), from));
}
