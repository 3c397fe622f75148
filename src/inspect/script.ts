/**
 * The inspector's script: vanilla DOM (tested in Chromium, Firefox and WebKit: test/e2e/inspector.test.ts), no build step, no network but the runtime's own
 * API, called with the frontend key the page keeps in sessionStorage. Everything from the API is written with
 * textContent, never as HTML. Kept as a string (no backticks or template holes inside): the route inlines it and
 * pins its hash in the Content-Security-Policy.
 */
export const INSPECTOR_SCRIPT = String.raw`(function () {
"use strict";
var KEY_NAME = "context-runtime:inspector-key";
var main = document.getElementById("main");
var bar = document.getElementById("status");

// ── the key: from the fragment (never sent to the server) or the form, kept for this tab only ──
function takeKeyFromFragment() {
  var match = /(?:^#|&)key=([^&]+)/.exec(location.hash);
  if (!match) return;
  sessionStorage.setItem(KEY_NAME, decodeURIComponent(match[1]));
  history.replaceState(null, "", location.pathname + location.search + "#/");
}
function key() { return sessionStorage.getItem(KEY_NAME); }

function keyForm(message) {
  clear(main);
  var input = el("input", { type: "password", id: "key-input", placeholder: "frontend API key", autocomplete: "off", size: "60" });
  var form = el("form", { id: "key-form" }, [
    el("p", { text: message || "The inspector reads this runtime's API with your frontend key. It stays in this tab (sessionStorage)." }),
    input, " ", el("button", { type: "submit", text: "Open" })
  ]);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (!input.value.trim()) return;
    sessionStorage.setItem(KEY_NAME, input.value.trim());
    route();
  });
  main.appendChild(form);
  input.focus();
}

// ── DOM helpers ──
function el(tag, attrs, children) {
  var node = document.createElement(tag);
  var a = attrs || {};
  Object.keys(a).forEach(function (name) {
    if (a[name] === undefined || a[name] === null) return;
    if (name === "text") node.textContent = String(a[name]);
    else if (name === "class") node.className = a[name];
    else node.setAttribute(name, String(a[name]));
  });
  (children || []).forEach(function (child) {
    if (child === null || child === undefined || child === false) return;
    node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  });
  return node;
}
function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }
function section(title, id, children) { return el("section", { id: id }, [el("h2", { text: title })].concat(children)); }
function table(headers, rows, attrs) {
  return el("table", attrs || {}, [
    el("thead", {}, [el("tr", {}, headers.map(function (h) { return el("th", { text: h }); }))]),
    el("tbody", {}, rows)
  ]);
}
function row(cells, attrs) {
  return el("tr", attrs || {}, cells.map(function (c) { return c instanceof Node ? el("td", {}, [c]) : el("td", { text: c === undefined || c === null ? "" : c }); }));
}
function link(text, hash) { return el("a", { href: hash, text: text }); }
function chip(text, kind) { return el("span", { class: "chip " + (kind || ""), text: text }); }
function num(n) { return typeof n === "number" ? n.toLocaleString("en-US") : "–"; }
function ms(n) { return typeof n === "number" ? (Math.round(n * 10) / 10) + " ms" : "–"; }
function when(iso) { return iso ? iso.replace("T", " ").replace(/\.\d+Z$/, "Z") : ""; }
function short(id) { return id && id.length > 13 ? id.slice(0, 8) + "…" : id; }
function say(text, kind) { bar.textContent = text; bar.className = kind || ""; }

// ── the API ──
function api(path, body) {
  var init = { headers: { Authorization: "Bearer " + key(), Accept: "application/json" } };
  if (body !== undefined) { init.method = "POST"; init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  return fetch(path, init).then(function (response) {
    return response.json().catch(function () { return {}; }).then(function (data) {
      if (response.ok) return data;
      var error = new Error((data && data.detail) || ("HTTP " + response.status));
      error.status = response.status;
      throw error;
    });
  });
}
function conversationPath(id) { return "/v1/conversations/" + encodeURIComponent(id); }
function allEvents(id) {
  var events = [];
  function page(after) {
    return api(conversationPath(id) + "/events?limit=500&after=" + after).then(function (p) {
      events = events.concat(p.events);
      return p.events.length === 500 ? page(p.nextAfter) : events;
    });
  }
  return page(0);
}
var COMPACTION_EVENT = /^context[.:]post_compact$/;
function turnsOf(events) {
  return events.filter(function (e) { return e.type === "turn.assembled"; }).map(function (e) { return { turnId: e.turnId, at: e.at, seq: e.seq, usage: e.data.usage }; });
}

// ── routing: #/ · #/c/{id} · #/c/{id}/t/{turnId} ──
function route() {
  takeKeyFromFragment();
  if (!key()) return keyForm();
  var parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  var view = parts[0] === "c" && parts[1] ? (parts[2] === "t" && parts[3] ? showTurn(parts[1], parts[3]) : showConversation(parts[1])) : showConversations();
  var started = performance.now();
  say("loading…", "busy");
  document.body.setAttribute("data-state", "loading");
  view.then(function () {
    say("loaded in " + Math.round(performance.now() - started) + " ms");
    document.body.setAttribute("data-state", "ready");
  }, function (error) {
    document.body.setAttribute("data-state", "error");
    if (error.status === 401) { sessionStorage.removeItem(KEY_NAME); return keyForm("That key was refused (" + error.message + "): paste a valid one."); }
    say(error.message, "error");
  });
}

// ── conversations, newest first ──
function showConversations() {
  return api("/v1/conversations?limit=100").then(function (page) {
    clear(main);
    main.appendChild(el("h1", { text: "Conversations" }));
    if (!page.conversations.length) return main.appendChild(el("p", { text: "No conversations yet." }));
    main.appendChild(table(["conversation", "agent", "created", "ended", "parent"], page.conversations.map(function (c) {
      return row([
        link(c.id, "#/c/" + encodeURIComponent(c.id)), c.agent || "–", when(c.createdAt), c.endedAt ? when(c.endedAt) : "",
        c.parent ? link("↑ " + short(c.parent.conversationId) + " (depth " + c.parent.depth + ")", "#/c/" + encodeURIComponent(c.parent.conversationId)) : ""
      ], { "data-conversation": c.id });
    }), { id: "conversations" }));
    if (page.nextCursor) main.appendChild(el("p", { class: "muted", text: "Showing the newest 100." }));
  });
}

// ── one conversation: its turns on a timeline, and its subagents ──
function showConversation(id) {
  return Promise.all([api(conversationPath(id)), allEvents(id), api(conversationPath(id) + "/delegations")]).then(function (got) {
    var info = got[0], events = got[1], delegations = got[2].delegations;
    var turns = turnsOf(events).slice(-60);
    return Promise.all(turns.map(function (t) { return api(conversationPath(id) + "/turns/" + encodeURIComponent(t.turnId)); })).then(function (past) {
      clear(main);
      main.appendChild(el("p", {}, [link("← conversations", "#/")]));
      main.appendChild(el("h1", { text: "Conversation " + id }));
      main.appendChild(el("p", { class: "muted" }, [
        "agent " + (info.agent || "–") + " · created " + when(info.createdAt) + " · " + info.messageCount + " messages" + (info.endedAt ? " · ended " + when(info.endedAt) : ""),
        info.parent ? el("span", {}, [" · subagent of ", link(info.parent.conversationId, "#/c/" + encodeURIComponent(info.parent.conversationId))]) : null
      ]));
      var between = compactionsBetween(events);
      main.appendChild(section("Turns", "timeline-section", [timeline(id, past, between)]));
      main.appendChild(section("Subagents", "subagents", [delegations.length ? table(["call", "agent", "child conversation", "state"], delegations.map(function (d) {
        return row([d.toolCallId, d.agent, link(d.childConversationId, "#/c/" + encodeURIComponent(d.childConversationId)), d.state || (d.completedAt ? "completed" : "running")], { "data-child": d.childConversationId });
      })) : el("p", { class: "muted", text: "None." })]));
    });
  });
}
/** Compactions outside a turn (a manual compact or a clear), keyed by the turn that follows them. */
function compactionsBetween(events) {
  var out = {}, pending = [];
  events.forEach(function (e) {
    if (COMPACTION_EVENT.test(e.type) && e.turnId === null) pending.push(e);
    if (e.type === "turn.assembled") { if (pending.length) out[e.turnId] = pending; pending = []; }
  });
  return out;
}
function latency(turn) { return (turn.envelope.stages || []).reduce(function (s, st) { return s + st.ms; }, 0); }
function cachedShare(turn) {
  var r = (turn.reportedUsage || []).filter(function (u) { return typeof u.cachedTokens === "number" && u.promptTokens > 0; });
  if (!r.length) return "–";
  var cached = r.reduce(function (s, u) { return s + u.cachedTokens; }, 0), prompt = r.reduce(function (s, u) { return s + u.promptTokens; }, 0);
  return Math.round(100 * cached / prompt) + " %";
}
function timeline(id, past, between) {
  var max = Math.max.apply(null, past.map(function (t) { return t.usage.total; }).concat([1]));
  return table(["#", "turn", "at", "latency", "tokens", "cached", "left out", "compaction", "tool calls", "hooks", "reminders", "subagents"], past.map(function (t, i) {
    var env = t.envelope, tools = (env.tools && env.tools.ran) || [], hooks = (env.hooks && env.hooks.calls) || [];
    var compaction = env.compaction ? chip(env.compaction.reason + " " + num(env.compaction.tokens.before) + "→" + num(env.compaction.tokens.after), "warn")
      : between[t.turnId] ? chip("between turns", "warn") : "";
    return row([
      String(i + 1),
      link(short(t.turnId), "#/c/" + encodeURIComponent(id) + "/t/" + encodeURIComponent(t.turnId)),
      when(t.createdAt),
      ms(latency(t)),
      el("span", { class: "tokens" }, [el("span", { class: "bar", style: "width:" + Math.round(60 * t.usage.total / max) + "px" }), " " + num(t.usage.total)]),
      cachedShare(t),
      leftOutChips(t.envelope),
      compaction,
      el("span", {}, tools.map(function (r) { return chip(r.tool + " " + r.outcome + (r.deniedBy ? " by " + r.deniedBy : ""), r.deniedBy ? "bad" : r.outcome === "ok" ? "ok" : "warn"); })),
      el("span", {}, hooks.map(function (h) { return chip(h.hook + " " + h.verdict, h.failed ? "bad" : ""); })),
      el("span", {}, (env.reminders || []).map(function (r) { return chip(r.kind, "note"); })),
      el("span", {}, ((env.tools && env.tools.delegated) || []).map(function (d) { return link(d.agent + " → " + short(d.childConversationId), "#/c/" + encodeURIComponent(d.childConversationId)); }))
    ], { "data-turn": t.turnId });
  }), { id: "timeline" });
}

// ── one turn ──
var SOURCES = {
  system_prompt: "runtime: identity block, one instruction block per capability, skills menu",
  tools: "tool list: the agent's bound tools (apps), the runtime's own, tools search_tools loaded",
  session_history: "history: the summary (if any) and the stored messages in view",
  user_message: "user: the user's own words",
  context: "app context (provider)",
  resource: "app resource (pushed)",
  memory: "runtime: memory fence (hints recalled for the user)",
  task_state: "runtime: task state (artifact refs)"
};
function showTurn(id, turnId) {
  return Promise.all([api(conversationPath(id) + "/turns/" + encodeURIComponent(turnId)), allEvents(id)]).then(function (got) {
    var turn = got[0], events = got[1];
    var turns = turnsOf(events), index = turns.map(function (t) { return t.turnId; }).indexOf(turnId);
    var previousId = index > 0 ? turns[index - 1].turnId : null;
    var previous = previousId ? api(conversationPath(id) + "/turns/" + encodeURIComponent(previousId)) : Promise.resolve(null);
    return previous.then(function (prev) {
      var eventsBetween = events.filter(function (e) { return (index > 0 ? e.seq > turns[index - 1].seq : true) && e.seq <= (index >= 0 ? turns[index].seq : Infinity); });
      clear(main);
      main.appendChild(el("p", {}, [link("← conversation", "#/c/" + encodeURIComponent(id)), previousId ? el("span", {}, [" · ", link("previous turn", "#/c/" + encodeURIComponent(id) + "/t/" + encodeURIComponent(previousId))]) : null,
        index >= 0 && index < turns.length - 1 ? el("span", {}, [" · ", link("next turn", "#/c/" + encodeURIComponent(id) + "/t/" + encodeURIComponent(turns[index + 1].turnId))]) : null]));
      main.appendChild(el("h1", { text: index >= 0 ? "Turn " + (index + 1) + " of " + turns.length : "Turn " + turnId }));
      if (index >= 0) main.appendChild(el("p", { class: "muted", text: turnId }));
      main.appendChild(el("p", { class: "muted", text: "agent " + turn.agent.id + " · " + when(turn.createdAt) + " · " + num(turn.usage.total) + " tokens" + (turn.envelope.budget.maxTokens !== null ? " of a " + num(turn.envelope.budget.maxTokens) + " budget" : "") + " · " + ms(latency(turn)) }));
      if (turn.gatewaySteps && turn.gatewaySteps.length > 1) main.appendChild(el("p", { class: "muted" }, ["one gateway request in " + turn.gatewaySteps.length + " steps: "].concat(turn.gatewaySteps.map(function (step, k) {
        return el("span", {}, [k ? " · " : "", step === turnId ? "step 1 (this turn)" : link("step " + (k + 1), "#/c/" + encodeURIComponent(id) + "/t/" + encodeURIComponent(step))]);
      }))));
      var grid = el("div", { class: "grid" }, [
        el("div", {}, [blocksView(turn), inputView(turn), toolsView(turn)]),
        el("div", {}, [leftOutView(turn), hooksView(turn), stagesView(turn)])
      ]);
      main.appendChild(grid);
      main.appendChild(diffView(prev, turn, eventsBetween));
      main.appendChild(cacheView(turn, prev));
      main.appendChild(whatIfView(id, turn));
    });
  });
}

/** How far each kind of block is trusted: what the runtime wrote, and outside text past the trust boundary (docs/layers.md). */
var TRUST = {
  system_prompt: "runtime",
  tools: "runtime (apps' declarations, checked at registration)",
  session_history: "user and model text, past the trust boundary",
  user_message: "the user's text, past the trust boundary",
  context: "outside: an app's data, neutralised and redacted, fenced in the appendix",
  resource: "outside: pushed by an app, neutralised and redacted",
  memory: "outside: memory, read through the gate and fenced as hints",
  task_state: "artifact pointers, not their content"
};

/** A context's or resource's version as this turn read it (the surface's digest), and whether it was injected now. */
function versionOf(turn, b) {
  if (!b.id) return "";
  var item = turn.envelope.surface.items.filter(function (i) { return i.id === b.id; })[0];
  var selected = turn.envelope.selection.selected.filter(function (s) { return s.id === b.id; })[0];
  var digest = item && item.source.digest ? item.source.digest.slice(0, 12) : "";
  return digest + (selected ? (digest ? " · " : "") + selected.reason : "");
}

function blocksView(turn) {
  var blocks = turn.envelope.assembly.blocks;
  var total = blocks.reduce(function (s, b) { return s + b.tokens; }, 0) || 1;
  return section("Model input, block by block", "blocks", [
    el("div", { class: "stack" }, blocks.map(function (b) {
      return el("span", { class: "seg k-" + b.kind, style: "flex-grow:" + Math.max(b.tokens, 1), title: b.kind + (b.id ? " " + b.id : "") + ": " + b.tokens + " tokens" });
    })),
    table(["block", "tokens", "share", "where", "source", "version", "trust"], blocks.map(function (b) {
      var app = b.id && b.id.indexOf(":") > 0 ? b.id.split(":")[0] : null;
      return row([el("span", {}, [el("i", { class: "swatch k-" + b.kind }), " " + b.kind + (b.id ? " " + b.id : "")]), num(b.tokens), Math.round(100 * b.tokens / total) + " %", b.target, (SOURCES[b.kind] || "") + (app ? " — app " + app : ""), versionOf(turn, b), TRUST[b.kind] || ""],
        { "data-block": b.kind + (b.id ? ":" + b.id : ""), "data-tokens": b.tokens });
    }), { id: "block-table" }),
    el("p", { class: "muted", text: "Tokens as the runtime counted them for this turn (o200k). Total " + num(turn.usage.total) + "." })
  ]);
}

/** The exact model input, message by message; the user's message split into its words and the runtime's appendix. */
function inputView(turn) {
  var last = turn.messages.length - 1;
  return section("The exact model input (" + turn.messages.length + " messages)", "input", turn.messages.map(function (m, i) {
    var text = textOf(m);
    var label = m.role;
    if (i === 0) label = "system — identity, capabilities, skills menu";
    else if (/^<summary_fence/.test(text)) label = "summary (" + (/covers="([^"]*)"/.exec(text) || ["", ""])[1] + ")";
    else if (m.role === "tool") label = "tool result " + m.tool_call_id;
    else if (m.role === "assistant" && m.tool_calls) label = "assistant — calls " + m.tool_calls.map(function (c) { return c.function.name; }).join(", ");
    var body = i === last && m.role === "user" && turn.usage.message > 0 ? appendixParts(text) : [el("pre", { text: text || JSON.stringify(m.tool_calls || m, null, 1) })];
    return el("details", { open: i === last ? "" : null, class: "message" }, [el("summary", { text: "#" + i + " " + label + " · " + text.length + " chars" })].concat(body));
  }));
}
var APPENDIX = /\n\n(?=<(persona_switch|memory_fence|task_state|system_reminder)[ >])/;
var PART_NAMES = { persona_switch: "persona switch / corrective note", memory_fence: "memory fence", task_state: "task state", system_reminder: "reminders and contexts" };
function appendixParts(text) {
  var pieces = text.split(APPENDIX).filter(function (_, i) { return i % 2 === 0; });
  return pieces.map(function (p, i) {
    var tag = (/^<([a-z_]+)/.exec(p) || [])[1];
    var name = i === 0 ? "the user's text" : (/ kind="([a-z_]+)"/.exec(p.split("\n")[0]) ? "stapled / corrective note (" + / kind="([a-z_]+)"/.exec(p.split("\n")[0])[1] + ")" : PART_NAMES[tag] || tag);
    return el("div", { class: "part", "data-part": i === 0 ? "user_text" : tag }, [el("div", { class: "part-name", text: name }), el("pre", { text: p })]);
  });
}
function textOf(m) {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) return m.content.map(function (p) { return p.type === "text" ? p.text : "[image " + ((p.image_url && p.image_url.url) || "") + "]"; }).join("\n");
  return "";
}
function toolsView(turn) {
  var offered = (turn.envelope.tools && turn.envelope.tools.offered) || [];
  var menu = turn.envelope.tools && turn.envelope.tools.skillsMenu;
  return section("Tool list", "tools", [
    offered.length ? table(["tool", "source", "app tool", "tokens"], offered.map(function (t) { return row([t.name, t.source, t.qualified || "runtime", num(t.tokens)]); })) : el("p", { class: "muted", text: "No tools." }),
    menu ? el("p", { class: "muted", text: "Skills menu: " + num(menu.tokens) + " tokens of a " + num(menu.budgetTokens) + "-token budget; " + menu.cut.length + " descriptions cut." }) : null
  ]);
}
/** A turn's contexts that did not reach the model for a reason worth a look: missing ones, and those left out but unchanged. */
function leftOutChips(env) {
  var missing = env.missing.map(function (m) { return chip(m.id + " missing (" + m.reason + ")", "bad"); });
  var omitted = env.selection.omitted.filter(function (o) { return o.reason !== "unchanged" && o.reason !== "missing"; }).map(function (o) { return chip(o.id + " " + o.reason, "warn"); });
  return el("span", { "data-left-out": String(missing.length + omitted.length) }, missing.concat(omitted));
}

function leftOutView(turn) {
  var env = turn.envelope, rows = [];
  // A missing context is also omitted with reason "missing": one row, the one that says why it is missing.
  env.selection.omitted.forEach(function (o) { if (o.reason !== "missing") rows.push(row([o.id, "omitted", o.reason], { "data-omitted": o.id })); });
  env.selection.removed.forEach(function (o) { rows.push(row([o.id, "removed", o.reason])); });
  env.budget.truncations.forEach(function (t) { rows.push(row([t.id, "given up (budget)", t.kind + ", class " + t.priority + ", " + num(t.tokens) + " tokens"])); });
  env.missing.forEach(function (m) { rows.push(row([m.id, "missing", m.reason + ": " + m.detail], { "data-omitted": m.id })); });
  ((env.tools && env.tools.notShown) || []).forEach(function (n) { rows.push(row([n.tool + " #" + n.seq, "result not shown", num(n.tokens) + " tokens did not fit"])); });
  ((env.tools && env.tools.skillsMenu && env.tools.skillsMenu.cut) || []).forEach(function (c) { rows.push(row([c.name, "skill " + c.reason, c.droppedChars + " chars dropped"])); });
  ((env.tools && env.tools.unanswered) || []).forEach(function (u) { rows.push(row([u.name + " " + u.id, "call unanswered", u.awaitingApproval ? "awaiting approval" : "no result"])); });
  var selected = env.selection.selected.map(function (s) { return chip(s.id + " " + s.reason, "ok"); });
  return section("Left out, and why", "left-out", [
    selected.length ? el("p", {}, ["Injected: "].concat(selected)) : null,
    rows.length ? table(["what", "", "why"], rows) : el("p", { class: "muted", text: "Nothing was left out." })
  ]);
}
function hooksView(turn) {
  var hooks = turn.envelope.hooks, ran = (turn.envelope.tools && turn.envelope.tools.ran) || [];
  return section("Hooks and tool calls", "hooks", [
    hooks && hooks.calls.length ? table(["hook", "point", "verdict", "latency"], hooks.calls.map(function (h) {
      return row([h.hook, h.point + (h.toolCallId ? " " + h.toolCallId : ""), el("span", {}, [chip(h.verdict, h.failed ? "bad" : ""), h.failed ? " " + h.failed : "", h.detail ? " " + h.detail : ""]), ms(h.ms)], { "data-hook": h.hook });
    })) : el("p", { class: "muted", text: hooks ? "No hook was called." : "The agent has no hooks." }),
    ran.length ? table(["call", "tool", "served by", "outcome", "time"], ran.map(function (r) {
      return row([r.toolCallId, r.tool, r.servedBy, el("span", {}, [chip(r.outcome, r.deniedBy ? "bad" : r.outcome === "ok" ? "ok" : "warn"), r.deniedBy ? " denied by " + r.deniedBy + (r.reason ? ": " + r.reason : "") : ""]), ms(r.ms)], { "data-call": r.toolCallId });
    })) : null
  ]);
}
function stagesView(turn) {
  var stages = turn.envelope.stages || [];
  var max = Math.max.apply(null, stages.map(function (s) { return s.ms; }).concat([0.001]));
  return section("Stages", "stages", [stages.length ? table(["stage", "time", "decided"], stages.map(function (s) {
    return row([s.stage, el("span", { class: "tokens" }, [el("span", { class: "bar", style: "width:" + Math.round(60 * s.ms / max) + "px" }), " " + ms(s.ms)]),
      Object.keys(s.decided).map(function (k) { return k + "=" + s.decided[k]; }).join(" ")]);
  })) : el("p", { class: "muted", text: "No stage record (an older turn)." })]);
}

// ── against the previous turn ──
function utf8Length(text) { return new TextEncoder().encode(text).length; }
function firstDivergence(before, after) {
  var n = Math.min(before.length, after.length), i = 0;
  while (i < n && before.charCodeAt(i) === after.charCodeAt(i)) i++;
  return i;
}
/** Where the two inputs part, as the upstream reads them: the tool list first, then the messages. */
function prefixOf(prev, turn) {
  var beforeTools = JSON.stringify(prev.tools || []), afterTools = JSON.stringify(turn.tools || []);
  var before = JSON.stringify(prev.messages).slice(0, -1), after = JSON.stringify(turn.messages);
  var toolsSame = beforeTools === afterTools;
  if (!toolsSame) {
    var t = firstDivergence(beforeTools, afterTools);
    return { kept: false, toolsSame: false, byte: utf8Length(afterTools.slice(0, t)), message: -1, prefixBytes: utf8Length(afterTools.slice(0, t)),
      before: beforeTools.slice(Math.max(0, t - 60), t + 80), after: afterTools.slice(Math.max(0, t - 60), t + 80) };
  }
  var at = firstDivergence(before, after);
  var kept = at === before.length;
  var message = -1, offset = 1;
  for (var i = 0; i < turn.messages.length; i++) {
    var len = JSON.stringify(turn.messages[i]).length + 1;
    if (at < offset + len - 1) { message = i; break; }
    offset += len;
  }
  var prefixBytes = utf8Length(afterTools) + utf8Length(after.slice(0, at));
  return { kept: kept, toolsSame: true, byte: prefixBytes, message: message, prefixBytes: prefixBytes, before: before.slice(Math.max(0, at - 60), at + 80), after: after.slice(Math.max(0, at - 60), at + 80) };
}
function breakReasons(prev, turn, between, prefix) {
  var reasons = [], env = turn.envelope;
  if (env.compaction) reasons.push("a compaction in this turn (" + env.compaction.reason + "): " + num(env.compaction.tokens.before) + " → " + num(env.compaction.tokens.after) + " tokens" +
    (env.compaction.summary ? ", a summary through #" + env.compaction.summary.coverage.throughSeq + " of " + env.compaction.summary.coverage.messages + " messages" : "") +
    (env.compaction.cleared.length ? ", " + env.compaction.cleared.length + " tool results cleared" : ""));
  between.filter(function (e) { return COMPACTION_EVENT.test(e.type) && e.turnId === null; }).forEach(function (e) {
    reasons.push((e.data.summary === undefined && e.data.hiddenThroughSeq !== undefined ? "a clear or image compaction" : "a compaction") + " between the turns (event " + e.type + " #" + e.subject + ", " + num(e.data.tokens) + " tokens after)");
  });
  if (prev.agent.id !== turn.agent.id) reasons.push("an agent switch: " + prev.agent.id + " → " + turn.agent.id);
  if (prev.createdAt.slice(0, 10) !== turn.createdAt.slice(0, 10)) reasons.push("midnight (UTC): messages from an earlier day get age headers");
  if (!prefix.toolsSame) reasons.push("the tool list changed");
  if (!reasons.length) reasons.push("no known cause: compare the two excerpts");
  return reasons;
}
function diffView(prev, turn, between) {
  if (!prev) return section("Against the previous turn", "diff", [el("p", { class: "muted", text: "This is the first turn." })]);
  var changes = [], env = turn.envelope;
  env.selection.selected.forEach(function (s) { changes.push(el("li", { "data-change": s.id }, [chip(s.reason === "updated" ? "context changed" : "context new", "ok"), " " + s.id + " (" + s.reason + ")"])); });
  env.selection.removed.forEach(function (s) { changes.push(el("li", { "data-change": s.id }, [chip("context removed", "warn"), " " + s.id + " (" + s.reason + ")"])); });
  env.missing.forEach(function (m) { changes.push(el("li", { "data-change": m.id }, [chip("context missing", "bad"), " " + m.id + " (" + m.reason + ")"])); });
  var names = function (t) { return ((t.tools || []).map(function (f) { return f.function.name; })); };
  var before = names(prev), after = names(turn);
  after.filter(function (n) { return before.indexOf(n) === -1; }).forEach(function (n) { changes.push(el("li", {}, [chip("tool added", "ok"), " " + n])); });
  before.filter(function (n) { return after.indexOf(n) === -1; }).forEach(function (n) { changes.push(el("li", {}, [chip("tool gone", "warn"), " " + n])); });
  if (prev.agent.id !== turn.agent.id) changes.push(el("li", {}, [chip("agent", "warn"), " " + prev.agent.id + " → " + turn.agent.id]));
  var kinds = {};
  prev.envelope.assembly.blocks.forEach(function (b) { kinds[b.kind] = (kinds[b.kind] || 0) - b.tokens; });
  env.assembly.blocks.forEach(function (b) { kinds[b.kind] = (kinds[b.kind] || 0) + b.tokens; });
  var deltas = Object.keys(kinds).filter(function (k) { return kinds[k] !== 0; }).map(function (k) { return row([k, (kinds[k] > 0 ? "+" : "") + num(kinds[k])]); });
  var prefix = prefixOf(prev, turn);
  var prefixPart = prefix.kept
    ? el("p", { id: "prefix", "data-prefix": "kept" }, [chip("prefix kept", "ok"), " the previous turn's input (" + num(utf8Length(JSON.stringify(prev.messages))) + " bytes) is a byte-for-byte prefix of this one: a provider's cache can serve it."])
    : el("div", { id: "prefix", "data-prefix": "broken", "data-byte": prefix.byte }, [
        el("p", {}, [chip("prefix broken", "bad"), " first divergent byte " + num(prefix.byte) + (prefix.message >= 0 ? ", in message #" + prefix.message + " (" + turn.messages[prefix.message].role + ")" : prefix.toolsSame ? "" : ", in the tool list (read before the messages)") + "."]),
        el("p", {}, ["Why: "]), el("ul", { id: "prefix-reasons" }, breakReasons(prev, turn, between, prefix).map(function (r) { return el("li", { text: r }); })),
        el("div", { class: "pair" }, [el("div", {}, [el("div", { class: "part-name", text: "previous" }), el("pre", { text: "…" + prefix.before + "…" })]), el("div", {}, [el("div", { class: "part-name", text: "this turn" }), el("pre", { text: "…" + prefix.after + "…" })])])
      ]);
  return section("Against the previous turn", "diff", [
    prefixPart,
    changes.length ? el("ul", { id: "changes" }, changes) : el("p", { class: "muted", text: "No context or tool changed." }),
    deltas.length ? table(["block", "tokens Δ"], deltas) : null,
    el("p", { class: "muted", text: num(prev.usage.total) + " → " + num(turn.usage.total) + " tokens; " + between.length + " events between." })
  ]);
}

// ── cache reconciliation ──
function cacheView(turn, prev) {
  var reports = turn.reportedUsage || [];
  var prefixBytes = prev ? prefixOf(prev, turn).prefixBytes : 0;
  if (!reports.length) return section("Reported usage", "cache", [el("p", { class: "muted", text: "No usage was reported for this turn (the gateway's model.usage, or usage appended with the reply)." })]);
  return section("Reported usage against the runtime's count", "cache", [
    table(["source", "step", "model", "prompt (reported)", "cached (reported)", "runtime's count", "difference"], reports.map(function (u) {
      var diff = u.promptTokens - turn.usage.total;
      return row([u.source || "frontend", u.step === undefined ? "" : String(u.step), u.model || "", num(u.promptTokens), u.cachedTokens === null ? "–" : num(u.cachedTokens) + " (" + Math.round(100 * u.cachedTokens / Math.max(u.promptTokens, 1)) + " %)",
        num(turn.usage.total), (diff > 0 ? "+" : "") + num(diff) + " (" + (Math.round(1000 * diff / Math.max(turn.usage.total, 1)) / 10) + " %)"], { "data-usage": u.source || "frontend" });
    }), { id: "usage-table" }),
    el("p", { class: "muted", text: "Prefix shared with the previous turn: " + num(prefixBytes) + " bytes of the serialised input (what the upstream may have cached)." })
  ]);
}

// ── what-if ──
function whatIfView(id, turn) {
  var budget = el("input", { type: "number", id: "whatif-budget", min: "1", placeholder: "budget (tokens)" });
  var windowInput = el("input", { type: "number", id: "whatif-window", min: "1024", placeholder: "context window" });
  var target = el("input", { type: "number", id: "whatif-target", step: "0.05", min: "0.3", max: "0.95", placeholder: "target (0.7)" });
  var out = el("div", { id: "whatif-result" });
  var form = el("form", { id: "whatif-form" }, [budget, " ", windowInput, " ", target, " ", el("button", { type: "submit", text: "Re-assemble" })]);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var body = {};
    if (budget.value) body.maxTokens = Number(budget.value);
    if (windowInput.value) body.contextWindow = Number(windowInput.value);
    if (target.value) body.compaction = { target: Number(target.value) };
    clear(out);
    out.setAttribute("data-state", "loading");
    api(conversationPath(id) + "/turns/" + encodeURIComponent(turn.turnId) + "/what-if", body).then(function (r) {
      out.setAttribute("data-state", "ready");
      out.setAttribute("data-before", r.before.tokens);
      out.setAttribute("data-after", r.after.tokens);
      var kinds = [];
      r.before.layers.concat(r.after.layers).forEach(function (l) { if (kinds.indexOf(l.kind) === -1) kinds.push(l.kind); });
      var total = function (layers, kind) { return layers.filter(function (l) { return l.kind === kind; }).reduce(function (s, l) { return s + l.tokens; }, 0); };
      out.appendChild(el("p", { id: "whatif-summary" }, [chip(r.fits ? "fits" : "does not fit", r.fits ? "ok" : "bad"), " " + num(r.before.tokens) + " → " + num(r.after.tokens) + " tokens (" + (r.difference > 0 ? "+" : "") + num(r.difference) + ")" + (r.maxTokens !== null ? " within " + num(r.maxTokens) : "")]));
      out.appendChild(table(["layer", "stored turn", "what-if", "Δ"], kinds.map(function (k) {
        var a = total(r.before.layers, k), b = total(r.after.layers, k);
        return row([k, num(a), num(b), b - a ? (b > a ? "+" : "") + num(b - a) : ""], { "data-layer": k });
      })));
      if (r.compaction) out.appendChild(el("p", { text: "Compaction: " + num(r.compaction.before) + " → " + num(r.compaction.after) + " tokens; " + r.compaction.clearedResults + " results cleared; " + r.compaction.summarisedGroups + " groups (" + r.compaction.summarisedMessages + " messages) summarised into ~" + num(r.compaction.summaryEstimate) + " tokens" + (r.compaction.reachesTarget ? "" : "; the target is not reached") + "." }));
      if (r.truncations.length) out.appendChild(el("p", { text: "Given up: " + r.truncations.map(function (t) { return t.id + " (" + t.tokens + ")"; }).join(", ") }));
    }, function (error) { out.setAttribute("data-state", "error"); out.appendChild(el("p", { class: "error", text: error.message })); });
  });
  return section("What if", "whatif", [el("p", { class: "muted", text: "Fit this turn again under another budget, window or compaction target. Nothing is stored; apps are not asked again." }), form, out]);
}

window.addEventListener("hashchange", route);
document.getElementById("forget").addEventListener("click", function () { sessionStorage.removeItem(KEY_NAME); keyForm("Key forgotten."); });
route();
})();`;
