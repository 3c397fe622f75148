import { INSPECTOR_SCRIPT } from "./script";

/** The inspector's styles: light and dark, no web fonts, nothing fetched. */
const STYLE = `
:root { color-scheme: light dark; --fg: #1d2329; --muted: #66707a; --line: #d9dee3; --bg: #fff; --panel: #f5f7f9; --ok: #1f7a4d; --warn: #9a6700; --bad: #b42318; --note: #5b4bb7; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ea; --muted: #9aa4ad; --line: #333a41; --bg: #15191d; --panel: #1e2328; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1em; align-items: center; padding: .6em 1.2em; border-bottom: 1px solid var(--line); background: var(--panel); }
header a { font-weight: 600; color: inherit; text-decoration: none; }
#status { color: var(--muted); flex: 1; }
#status.error { color: var(--bad); }
main { padding: 1em 1.2em 3em; max-width: 1500px; }
h1 { font-size: 1.25em; word-break: break-all; } h2 { font-size: 1.05em; margin: 1.4em 0 .5em; }
table { border-collapse: collapse; width: 100%; margin: .3em 0; }
th, td { text-align: left; padding: .25em .5em; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 500; }
pre { white-space: pre-wrap; word-break: break-word; margin: .3em 0; padding: .5em; background: var(--panel); border-radius: 4px; font-size: 12px; }
.muted { color: var(--muted); }
.error { color: var(--bad); }
.grid { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.5em; }
@media (max-width: 900px) { .grid { grid-template-columns: 1fr; } }
.chip { display: inline-block; padding: 0 .45em; margin: 1px 2px; border-radius: 9px; border: 1px solid var(--line); font-size: 12px; white-space: nowrap; }
.chip.ok { color: var(--ok); border-color: var(--ok); } .chip.warn { color: var(--warn); border-color: var(--warn); }
.chip.bad { color: var(--bad); border-color: var(--bad); } .chip.note { color: var(--note); border-color: var(--note); }
.tokens { white-space: nowrap; } .bar { display: inline-block; height: 8px; background: #4f8fd6; border-radius: 2px; vertical-align: middle; }
.stack { display: flex; height: 18px; border-radius: 4px; overflow: hidden; margin: .3em 0 .6em; }
.seg { min-width: 2px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; vertical-align: middle; }
.k-system_prompt { background: #6b7a8f; } .k-tools { background: #8e6bbf; } .k-session_history { background: #4f8fd6; } .k-user_message { background: #2f9e72; }
.k-context { background: #e0a43a; } .k-resource { background: #d9793b; } .k-memory { background: #c0508f; } .k-task_state { background: #3bb3c3; }
details.message { border-left: 3px solid var(--line); padding-left: .6em; margin: .3em 0; } summary { cursor: pointer; }
.part { margin: .3em 0; } .part-name { font-size: 12px; color: var(--muted); }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: .8em; }
form input { padding: .3em; } form input[type=number] { width: 11em; } button { padding: .3em .8em; }
`;

/** The whole page: HTML, CSS and script inline, so it needs nothing but the runtime's API. */
export const INSPECTOR_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Context Runtime inspector</title>
<style>${STYLE}</style>
</head>
<body data-state="loading">
<header><a href="#/">Context Runtime · inspector</a><span id="status" role="status"></span><button id="forget" type="button">Forget key</button></header>
<main id="main"></main>
<script>${INSPECTOR_SCRIPT}</script>
</body>
</html>
`;
