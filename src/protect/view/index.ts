/**
 * The views detection runs on besides the text itself, each a function from a text to views of parts of it:
 * folded, joined, pieces put together, base64-decoded, hex-decoded.
 *
 * The folded view, defined here: escapes decoded (`%67`, `\u0067`, `\x67`, `&#103;`), invisible characters
 * dropped (ZWSP, ZWJ, WJ, SHY, CGJ, bidi controls) and look-alike letters read as the ASCII they imitate
 * (Cyrillic `р`, full-width `ｇ`), so `gh\u200bp_…` or `%67hp_…` reads `ghp_…`. Case is kept: issuers' prefixes
 * are case-sensitive. Only windows around a non-ASCII character or an escape (found by the shared pass over the
 * text) are folded.
 */
import { foldText } from "../../core/folded-view";
import { textRuns } from "../text-runs";
import { base64Views, hexViews } from "./decoded";
import { joinedViews } from "./join";
import { piecesViews } from "./pieces";
import { shiftView, windowsAround, type DerivedView } from "./view";

export { changedFromOriginal, originalSpan, type DerivedView } from "./view";

const FOLD_RADIUS = 512;

function foldedViews(text: string): DerivedView[] {
  return windowsAround(text, textRuns(text).foldable, FOLD_RADIUS).map(([from, to]) => shiftView(foldText(text.slice(from, to), { keepCase: true, decodeEscapes: true }), from));
}

export const VIEWS: readonly ((text: string) => DerivedView[])[] = [foldedViews, joinedViews, piecesViews, base64Views, hexViews];
