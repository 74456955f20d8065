// mcpmock view: cassettes as sequence diagrams, with a details pane.
//
// The data comes from the JSON API (api/cassettes, api/cassettes/N) or, in a
// file written by mcpmock view --html, from the script element
// #mcpmock-data. Cassettes are untrusted input: every value is shown with
// textContent or as an attribute that cannot run anything, never as markup,
// and an image or audio block is shown only when its mimeType is one of a
// few known media types and its data is base64.
"use strict";

const ROW = 24; // px, the height of a message's row (app.css --row)
const OVERSCAN = 20; // rows rendered above and below the visible ones

const state = {
  docs: [], // the cassettes' models
  shown: [0], // the cassettes drawn, one per column
  selected: null, // {doc, seq}
  filter: { search: "", method: "", tool: "", dir: "", errors: false },
  axis: "order",
  split: false,
  diagrams: [],
};

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

function svg(tag, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

async function load() {
  const embedded = document.getElementById("mcpmock-data");
  if (embedded) return JSON.parse(embedded.textContent);
  const list = await (await fetch("api/cassettes")).json();
  state.live = list.filter((c) => c.live).length; // the live ones come first
  return Promise.all(list.map(async (c) => (await fetch("api/cassettes/" + c.index)).json()));
}

// follow keeps a live view up to date: the server says how many messages
// each cassette has now, the page fetches again those that changed (and
// the list, when cassettes came) and draws them where the reader is.
function follow() {
  const events = new EventSource("api/events");
  let fetching = false, again = false;
  const update = async (counts) => {
    if (fetching) { again = counts; return; }
    fetching = true;
    try {
      if (counts.length !== state.docs.length) {
        state.docs.length = counts.length;
        const list = await (await fetch("api/cassettes")).json();
        state.live = list.filter((c) => c.live).length;
      }
      const changed = counts.map((n, i) => (!state.docs[i] || state.docs[i].messages.length !== n) ? i : -1).filter((i) => i >= 0);
      if (!changed.length) return;
      const docs = await Promise.all(changed.map(async (i) => (await fetch("api/cassettes/" + i)).json()));
      const scroll = state.diagrams.map((d) => d.scroll.scrollTop);
      const atEnd = state.diagrams.map((d) => d.scroll.scrollTop + d.scroll.clientHeight >= d.scroll.scrollHeight - 2 * ROW);
      const selected = state.selected;
      const selectedAt = selected ? state.docs.indexOf(selected.doc) : -1;
      changed.forEach((i, k) => { state.docs[i] = docs[k]; });
      draw();
      state.diagrams.forEach((d, i) => { d.scroll.scrollTop = atEnd[i] ? d.scroll.scrollHeight : scroll[i]; d.render(true); });
      if (selectedAt >= 0 && state.docs[selectedAt] && selected.seq < state.docs[selectedAt].messages.length) select(state.docs[selectedAt], selected.seq);
      document.body.dataset.messages = String(state.docs[0].messages.length);
    } finally {
      fetching = false;
      if (again) { const c = again; again = false; update(c); }
    }
  };
  events.addEventListener("messages", (ev) => update(JSON.parse(ev.data)));
}

// recordedOf is the cassette that holds the recorded interactions a
// replay of doc answered from: the one its replay names, or doc itself.
function recordedOf(doc) {
  const name = doc.replay && doc.replay.recorded;
  return (name && state.docs.find((d) => d && d.name === name)) || doc;
}

// unusedOf is the set of interactions of doc that a replay (of doc, or a
// live one beside it) says no client used.
function unusedOf(doc) {
  const out = new Set();
  for (const d of state.docs) {
    if (d && d.replay && recordedOf(d) === doc) for (const u of d.replay.unused) out.add(u.interaction);
  }
  return out;
}

// outcomeText says what a replay made of a request.
function outcomeText(m) {
  switch (m.outcome) {
    case "matched": return "answered by recorded #" + m.answered;
    case "repeated": return "answered again by recorded #" + m.answered;
    case "scripted": return m.answered ? "scripted, on the answer of recorded #" + m.answered : "scripted";
    case "missed": return "missed: no recorded interaction matched";
  }
  return "";
}

// label is the text of a message's arrow.
function label(m) {
  const parts = [];
  if (m.id) parts.push(m.id);
  if (m.kind === "raw") parts.push("(not JSON-RPC)");
  else if (m.kind === "note") return "mcpmock " + (m.level === "INFO" ? "" : m.level.toLowerCase() + ": ") + m.summary;
  else if (m.kind === "miss") return "✗ missed " + m.method + (m.tool ? " " + m.tool : "") + " (not in the cassette)";
  else if (m.kind === "response" || m.kind === "error") parts.push(m.method ? "↩ " + m.method : "↩");
  else parts.push(m.method);
  if (m.tool) parts.push(m.tool);
  if (m.error) parts.push("✗ " + m.error);
  else if (m.summary) parts.push(m.summary);
  if (m.outcome) parts.push("[" + (m.outcome === "missed" ? "✗ missed" : m.outcome + (m.answered ? " #" + m.answered : "")) + "]");
  else if (m.note) parts.push("[" + m.note + "]");
  return parts.join(" ");
}

function matches(m) {
  const f = state.filter;
  if (f.method && m.method !== f.method) return false;
  if (f.tool && m.tool !== f.tool) return false;
  if (f.dir && m.from !== f.dir) return false;
  if (f.errors && !(m.kind === "error" || m.isError || m.outcome === "missed" || (m.kind === "note" && m.level !== "INFO"))) return false;
  if (f.search) {
    const hay = (label(m) + " " + (m.raw || "") + " " + (m.json ? JSON.stringify(m.json) : "")).toLowerCase();
    if (!hay.includes(f.search)) return false;
  }
  return true;
}

// Diagram draws one cassette: a lane header and the rows of its messages,
// only those in view (virtual scrolling).
class Diagram {
  constructor(doc) {
    this.doc = doc;
    this.root = el("div", { class: "diagram" });
    this.root.append(el("div", { class: "lanes" },
      el("span", { class: "title", title: doc.name }, doc.name),
      el("span", {}, "client"), el("span", {}, "mcpmock"), el("span", {}, "server")));
    this.scroll = el("div", { class: "scroll", tabindex: "0" });
    this.spacer = el("div", { class: "spacer" });
    this.scroll.append(this.spacer);
    this.root.append(this.scroll);
    this.scroll.addEventListener("scroll", () => this.render());
    this.rowsBySeq = new Map();
    this.unused = unusedOf(doc);
    this.relayout();
  }

  // relayout applies the filter and the axis: which messages, where.
  relayout() {
    this.items = this.doc.messages.filter(matches);
    this.y = new Float64Array(this.items.length);
    let timed = state.axis === "time" && this.items.some((m) => m.atMs > 0);
    let scale = 0;
    if (timed) {
      const span = this.items[this.items.length - 1].atMs - this.items[0].atMs;
      scale = span > 0 ? (this.items.length * ROW * 3) / span : 0;
    }
    let y = 0;
    for (let i = 0; i < this.items.length; i++) {
      if (i > 0) {
        y += ROW;
        if (scale) y = Math.max(y, (this.items[i].atMs - this.items[0].atMs) * scale);
      }
      this.y[i] = y;
    }
    this.spacer.style.height = (this.items.length ? y + ROW : 0) + "px";
    this.spacer.replaceChildren();
    this.rowsBySeq.clear();
    this.rendered = [0, 0];
    this.render(true);
  }

  // first returns the index of the first item whose row ends below top.
  first(top) {
    let lo = 0, hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.y[mid] + ROW <= top) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  render(force) {
    const top = this.scroll.scrollTop, height = this.scroll.clientHeight || 800;
    const from = Math.max(0, this.first(top) - OVERSCAN);
    const to = Math.min(this.items.length, this.first(top + height) + OVERSCAN + 1);
    if (!force && from === this.rendered[0] && to === this.rendered[1]) return;
    this.rendered = [from, to];
    const keep = new Map();
    for (let i = from; i < to; i++) {
      const m = this.items[i];
      let row = this.rowsBySeq.get(m.seq);
      if (!row) {
        row = this.row(m);
        row.style.top = this.y[i] + "px";
        this.spacer.append(row);
      }
      keep.set(m.seq, row);
    }
    for (const [seq, row] of this.rowsBySeq) if (!keep.has(seq)) row.remove();
    this.rowsBySeq = keep;
    this.mark();
  }

  row(m) {
    const cls = ["row", "from-" + m.from, "kind-" + m.kind];
    if (m.isError) cls.push("tool-error");
    if (m.by) cls.push("by-" + m.by);
    if (m.outcome) cls.push("outcome-" + m.outcome);
    if (m.outcome === "missed") cls.push("miss");
    if (m.level) cls.push("level-" + String(m.level).toLowerCase());
    if (this.unused.has(m.interaction) && m.from === "client" && m.kind === "request") cls.push("unused");
    const lane = el("div", { class: "lane" });
    const line = svg("svg", { preserveAspectRatio: "none" });
    // The lanes: client at 1/6, mcpmock at 1/2, server at 5/6 of the width.
    const X = { client: 16.7, mcpmock: 50, server: 83.3 };
    let from = m.by === "mcpmock" ? "mcpmock" : m.from;
    let to = m.from === "client" ? "server" : "client";
    if (m.from === "client" && (m.outcome === "missed" || m.outcome === "scripted")) to = "mcpmock";
    if (m.from === "client" && m.kind !== "request" && m.kind !== "notification" && this.doc.messages[m.pair] && this.doc.messages[m.pair].by === "mcpmock") to = "mcpmock";
    if (m.from === "mcpmock") {
      // A note or a miss of mcpmock's own: a mark on its lane.
      line.append(svg("circle", { cx: "50%", cy: "55%", r: 5 }));
      lane.append(line, el("span", { class: "label" }, label(m)));
    } else {
      line.append(svg("line", { x1: X[from] + "%", x2: X[to] + "%", y1: "70%", y2: "70%" }));
      lane.append(line, el("span", { class: "label" }, label(m)));
    }
    const labelEl = lane.lastChild;
    if (m.from !== "mcpmock") {
      // Over the arrow; an arrow to or from mcpmock's lane (half the
      // width) lends its label the other half.
      const left = Math.min(X[from], X[to]), right = Math.max(X[from], X[to]);
      const short = right - left < 50;
      labelEl.style.left = left + 0.5 + "%";
      labelEl.style.right = (short ? 1 : 100 - right + 0.5) + "%";
      labelEl.style.textAlign = X[to] > X[from] || short ? "left" : "right";
    }
    const when = state.axis === "time" && m.atMs > 0 ? m.atMs.toFixed(1) + " ms" : "#" + (m.seq + 1);
    const attrs = { class: cls.join(" "), "data-seq": String(m.seq), title: label(m) };
    if (m.session > 0 && this.doc.sessions[m.session] && this.doc.sessions[m.session].first === m.seq) {
      attrs.class += " session-start";
      attrs["data-session"] = String(m.session + 1);
    }
    const row = el("div", attrs, el("span", { class: "when" }, when), lane);
    row.addEventListener("click", () => select(this.doc, m.seq));
    row.addEventListener("mouseenter", () => this.pair(m.pair, true));
    row.addEventListener("mouseleave", () => this.pair(m.pair, false));
    return row;
  }

  pair(seq, on) {
    const row = this.rowsBySeq.get(seq);
    if (row) row.classList.toggle("paired", on);
  }

  mark() {
    for (const [seq, row] of this.rowsBySeq) {
      row.classList.toggle("selected", !!state.selected && state.selected.doc === this.doc && state.selected.seq === seq);
    }
  }
}

// jsonTree shows a JSON value as nested, collapsible elements.
function jsonTree(v, key, depth) {
  const keyEl = key === undefined ? null : el("span", { class: "key" }, JSON.stringify(key) + ": ");
  if (v !== null && typeof v === "object") {
    const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    const open = Array.isArray(v) ? "[" : "{", close = Array.isArray(v) ? "]" : "}";
    const d = el("details", depth < 4 ? { open: "" } : {});
    d.append(el("summary", {}, keyEl, open + (entries.length ? "" : close), entries.length ? el("span", { class: "hint" }, " " + entries.length + (Array.isArray(v) ? " items" : " members")) : null));
    for (const [k, x] of entries) d.append(jsonTree(x, Array.isArray(v) ? undefined : k, depth + 1));
    if (entries.length) d.append(el("div", { class: "leaf" }, close));
    return d;
  }
  let cls = "lit";
  if (typeof v === "string") cls = "str";
  else if (typeof v === "number") cls = "num";
  return el("div", { class: "leaf" }, keyEl, el("span", { class: cls }, JSON.stringify(v)));
}

const imageTypes = /^image\/(png|jpeg|gif|webp|bmp)$/;
const audioTypes = /^audio\/(wav|x-wav|wave|mpeg|mp3|ogg|webm|flac|aac|mp4)$/;
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

// contentBlocks renders the content blocks of a result or a sampling
// message: text, images, audio, resources and resource links.
function contentBlocks(content) {
  const out = el("div", {});
  for (const c of content) {
    if (!c || typeof c !== "object") continue;
    const block = el("div", { class: "block" }, el("div", { class: "hint" }, String(c.type)));
    switch (c.type) {
      case "text":
        block.append(el("pre", {}, String(c.text)));
        break;
      case "image":
      case "audio": {
        const types = c.type === "image" ? imageTypes : audioTypes;
        const mime = String(c.mimeType), data = String(c.data).replace(/\s/g, "");
        if (types.test(mime) && base64.test(data)) {
          const src = "data:" + mime + ";base64," + data;
          block.append(c.type === "image" ? el("img", { src, alt: "image content (" + mime + ")" }) : el("audio", { src, controls: "" }));
        } else {
          block.append(el("div", {}, "not shown: mimeType " + JSON.stringify(mime) + " is not an " + c.type + " type this page plays, or its data is not base64"));
        }
        break;
      }
      case "resource": {
        const r = c.resource || {};
        block.append(el("div", {}, String(r.uri || "")));
        if (typeof r.text === "string") block.append(el("pre", {}, r.text));
        else if (typeof r.blob === "string") block.append(el("div", { class: "hint" }, "blob of " + r.blob.length + " base64 characters, " + String(r.mimeType || "")));
        break;
      }
      case "resource_link":
        block.append(el("div", {}, String(c.name || "") + " " + String(c.uri || "")));
        if (c.description) block.append(el("div", { class: "hint" }, String(c.description)));
        break;
      default:
        block.append(jsonTree(c, undefined, 1));
    }
    out.append(block);
  }
  return out;
}

// link is a button that selects message seq of doc.
function link(doc, seq, text) {
  const b = el("button", { type: "button", class: "link" }, text);
  b.addEventListener("click", (ev) => { ev.stopPropagation(); show(doc, seq); });
  return b;
}

// show selects message seq of doc, drawing doc first when it is not, and
// scrolls to it.
function show(doc, seq) {
  let d = state.diagrams.find((x) => x.doc === doc);
  if (!d) {
    const i = state.docs.indexOf(doc);
    if (i < 0) return;
    if (state.docs.length > 1 && state.shown.length === 1 && state.docs[state.shown[0]] !== doc) {
      state.split = true;
      document.getElementById("split").checked = true;
      state.shown = [state.shown[0], i];
    } else state.shown = [i];
    draw();
    d = state.diagrams.find((x) => x.doc === doc);
  }
  if (d) {
    const k = d.items.findIndex((m) => m.seq === seq);
    if (k >= 0 && (d.y[k] < d.scroll.scrollTop || d.y[k] > d.scroll.scrollTop + d.scroll.clientHeight - ROW)) {
      d.scroll.scrollTop = Math.max(0, d.y[k] - d.scroll.clientHeight / 2);
      d.render(true);
    }
  }
  select(doc, seq);
}

// indexOf is what select needs to know of a cassette, made once per
// model: whether it has timing, the notes about each message, the first
// message and the HTTP facts of each interaction.
const indexes = new WeakMap();
function indexOf(doc) {
  let ix = indexes.get(doc);
  if (ix) return ix;
  ix = { timed: false, notes: new Map(), first: new Map(), http: new Map() };
  for (const m of doc.messages) {
    if (m.atMs > 0) ix.timed = true;
    if (m.kind === "note" && m.pair >= 0) {
      if (!ix.notes.has(m.pair)) ix.notes.set(m.pair, []);
      ix.notes.get(m.pair).push(m);
    }
    if (m.interaction > 0 && !ix.first.has(m.interaction)) ix.first.set(m.interaction, m.seq);
    if (m.interaction > 0 && m.http && !ix.http.has(m.interaction)) ix.http.set(m.interaction, m.http);
  }
  indexes.set(doc, ix);
  return ix;
}

// interactionSeq is the Seq of the first message of interaction n of doc.
function interactionSeq(doc, n) {
  const seq = indexOf(doc).first.get(n);
  return seq === undefined ? -1 : seq;
}

// diffBlock shows a diff (-recorded +live) with its lines marked.
function diffBlock(text) {
  const pre = el("pre", { class: "diff" });
  for (const line of String(text).split("\n")) {
    const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
    pre.append(el("span", cls ? { class: cls } : {}, line), "\n");
  }
  return pre;
}

// missBlock explains a miss: the message, each candidate's differences
// and diff.
function missBlock(doc, miss) {
  const box = el("div", { class: "outcome missed" });
  box.append(el("strong", {}, "missed: " + miss.method + (miss.tool ? " " + miss.tool : "")));
  if (miss.message) box.append(el("p", {}, miss.message));
  const recorded = recordedOf(doc);
  for (const c of miss.candidates || []) {
    const seq = interactionSeq(recorded, c.interaction);
    const head = el("p", {}, "closest: recorded interaction #" + c.interaction + (c.tool ? " (" + c.tool + ")" : "") + " ");
    if (seq >= 0) head.append(link(recorded, seq, "show it"));
    box.append(head);
    if (c.differences && c.differences.length) {
      const ul = el("ul", {});
      for (const d of c.differences) ul.append(el("li", {}, d));
      box.append(ul);
    }
    if (c.diff) box.append(diffBlock(c.diff));
  }
  if (!(miss.candidates || []).length && miss.explanation) box.append(el("pre", { class: "diff" }, miss.explanation));
  return box;
}

// toolList shows the tools of one list with their schemas; the tools
// added or changed since the list before are marked, and the removed ones
// are named.
function toolList(list) {
  const ul = el("ul", { class: "tools" });
  const added = new Set(list.added || []), changed = new Set(list.changed || []);
  for (const t of list.tools) {
    const cls = added.has(t.name) ? "added" : changed.has(t.name) ? "changed" : "";
    const li = el("li", cls ? { class: cls } : {}, el("strong", {}, t.name), cls ? el("span", { class: "badge" }, cls) : null,
      t.description ? el("div", {}, t.description) : null);
    for (const k of ["annotations", "inputSchema", "outputSchema"]) {
      if (t[k]) li.append(el("div", { class: "json" }, jsonTree(t[k], k, 2)));
    }
    ul.append(li);
  }
  for (const name of list.removed || []) ul.append(el("li", { class: "removed" }, el("strong", {}, name), el("span", { class: "badge" }, "removed")));
  return ul;
}

function listHead(doc, list) {
  const p = el("p", { class: "changes" }, "listed in ", link(doc, list.seq, "#" + (list.seq + 1)), " (session " + (list.session + 1) + "): " + list.tools.length + " tools");
  if (list.added) p.append("; added " + list.added.join(", "));
  if (list.removed) p.append("; removed " + list.removed.join(", "));
  if (list.changed) p.append("; changed " + list.changed.join(", "));
  return p;
}

// contentOf gathers the content blocks of a message: of a tool result, of
// sampling and prompt messages, and the contents of resources/read.
function contentOf(json) {
  const out = [];
  if (!json || typeof json !== "object") return out;
  for (const part of [json.result, json.params]) {
    if (!part || typeof part !== "object") continue;
    if (Array.isArray(part.content)) out.push(...part.content);
    else if (part.content && typeof part.content === "object") out.push(part.content);
    if (Array.isArray(part.messages)) {
      for (const msg of part.messages) {
        if (!msg || typeof msg !== "object") continue;
        const c = msg.content;
        if (Array.isArray(c)) out.push(...c);
        else if (c && typeof c === "object") out.push(c);
      }
    }
    if (Array.isArray(part.contents)) for (const r of part.contents) out.push({ type: "resource", resource: r });
  }
  return out;
}

function select(doc, seq) {
  state.selected = { doc, seq };
  for (const d of state.diagrams) d.mark();
  const m = doc.messages[seq];
  const details = document.getElementById("details");
  const rows = [
    ["message", "#" + (m.seq + 1) + " of " + doc.messages.length + (m.interaction ? ", interaction " + m.interaction : "") + ", session " + (m.session + 1)],
    ["from", m.from + (m.by ? " (answered by " + m.by + " itself)" : "")], ["kind", m.kind], ["id", m.id], ["method", m.method], ["tool", m.tool],
    ["batch", m.batch],
  ];
  const at = (ms) => (Math.round(ms * 1000) / 1000) + " ms";
  if (m.from !== "mcpmock") rows.push([state.docs.indexOf(doc) < (state.live || 0) ? "at" : "recorded at", m.atMs ? at(m.atMs) : indexOf(doc).timed ? "0 ms" : "no timing recorded"]);
  const pair = m.pair >= 0 ? doc.messages[m.pair] : null;
  if (pair && m.kind !== "note" && m.kind === "request" && pair.atMs > 0 && m.atMs >= 0 && pair.atMs >= m.atMs && (m.atMs > 0 || pair.atMs > 0)) rows.push(["latency", (pair.atMs - m.atMs).toFixed(1) + " ms (recorded)"]);
  const table = el("table", {});
  for (const [k, v] of rows) if (v !== undefined && v !== "" && v !== 0) table.append(el("tr", {}, el("th", {}, k), el("td", {}, String(v))));
  if (pair) {
    const k = m.kind === "note" ? "about" : m.kind === "request" ? "answered by" : "answers";
    table.append(el("tr", {}, el("th", {}, k), el("td", {}, link(doc, pair.seq, "#" + (pair.seq + 1) + " " + clip(label(pair), 90)))));
  }
  const parts = [el("h2", {}, clip(label(m), 200)), table];
  for (const n of indexOf(doc).notes.get(m.seq) || []) {
    if (!(m.outcome === "missed" && n.note === m.explanation)) parts.push(el("p", { class: "outcome" + (n.level === "INFO" ? "" : " missed") }, "mcpmock: " + firstLineOf(n.note) + " ", link(doc, n.seq, "#" + (n.seq + 1))));
  }
  if (m.kind === "note") parts.push(el("pre", { class: "diff" }, m.note));
  else if (m.outcome && m.outcome !== "missed") {
    const box = el("div", { class: "outcome" }, outcomeText(m));
    const recorded = recordedOf(doc), at = m.answered ? interactionSeq(recorded, m.answered) : -1;
    if (at >= 0 && recorded !== doc) box.append(" ", link(recorded, at, "show it in " + recorded.name));
    if (m.note) box.append(el("div", { class: "hint" }, "[" + m.note + "]"));
    parts.push(box);
  } else if (m.note && m.outcome !== "missed") parts.push(el("p", {}, "mcpmock: " + m.note));
  if (m.outcome === "missed") {
    const miss = (doc.replay && doc.replay.misses.find((x) => x.seq === m.seq)) || { method: m.method, tool: m.tool, message: m.error, explanation: m.explanation, candidates: [] };
    parts.push(missBlock(doc, miss));
    if (m.explanation && (miss.candidates || []).length) parts.push(el("details", {}, el("summary", {}, "mcpmock's explanation, as logged"), el("pre", { class: "diff" }, m.explanation)));
  }
  if (m.error && m.kind !== "miss") parts.push(el("p", { class: "error-text" }, (m.kind === "error" ? "protocol error: " : "tool error: ") + m.error));
  if (m.listChange) {
    const before = doc.tools[m.listChange.before], after = doc.tools[m.listChange.after];
    parts.push(el("h2", {}, "tools before the change"), before ? listHead(doc, before) : el("p", { class: "hint" }, "no tools/list before it in this session"));
    if (before) parts.push(toolList({ tools: before.tools }));
    parts.push(el("h2", {}, "tools after the change"), after ? listHead(doc, after) : el("p", { class: "hint" }, "no tools/list after it in this session"));
    if (after) parts.push(toolList(after));
  }
  const list = doc.tools.find((l) => l.seq === m.seq);
  if (list) parts.push(el("h2", {}, "tools"), listHead(doc, list), toolList(list));
  // The HTTP facts are the interaction's: on its request.
  const http = m.http || indexOf(doc).http.get(m.interaction);
  if (http) {
    const h = http, t = el("table", {});
    for (const [k, v] of [["url", h.url], ["status", h.status], ["form", h.form], ["stream", h.stream], ["event ids", (h.eventIds || []).join(", ")], ["body", h.body]]) {
      if (v) t.append(el("tr", {}, el("th", {}, k), el("td", {}, String(v))));
    }
    for (const [name, headers] of [["request header", h.requestHeaders], ["response header", h.responseHeaders]]) {
      for (const [k, v] of Object.entries(headers || {})) t.append(el("tr", {}, el("th", {}, name), el("td", {}, k + ": " + (Array.isArray(v) ? v.join(", ") : String(v)))));
    }
    parts.push(el("h2", {}, "HTTP"), t);
  }
  const content = contentOf(m.json);
  if (content.length) parts.push(el("h2", {}, "content"), contentBlocks(content));
  if (m.kind === "raw") parts.push(el("h2", {}, "line"), el("pre", { class: "json" }, m.raw));
  else if (m.json) parts.push(el("h2", {}, "message"), el("div", { class: "json" }, jsonTree(m.json, undefined, 0)));
  details.replaceChildren(...parts);
}

function clip(s, n) {
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

function firstLineOf(s) {
  return String(s || "").split("\n")[0];
}

function showTools() {
  const details = document.getElementById("details");
  const parts = [];
  for (const i of state.shown) {
    const doc = state.docs[i];
    parts.push(el("h2", {}, "tools of " + doc.name));
    if (!doc.tools.length) parts.push(el("p", { class: "hint" }, "no tools/list result in this cassette"));
    for (const list of doc.tools) parts.push(listHead(doc, list), toolList(list));
  }
  details.replaceChildren(...parts);
}

// showReplay shows what each replay made of its cassette: the misses
// with their explanations, the recorded requests no client used, the
// scripted faults.
function showReplay() {
  const details = document.getElementById("details");
  const parts = [];
  for (const doc of state.docs) {
    if (!doc || !doc.replay) continue;
    const r = doc.replay, recorded = recordedOf(doc);
    parts.push(el("h2", {}, "replay of " + recorded.name + (r.report ? " (report " + r.report + ")" : " (live)")));
    parts.push(el("p", {}, r.misses.length + " missed, " + r.unused.length + " recorded requests unused" + (r.report ? "" : " so far")));
    const misses = el("ul", { class: "panel-list" });
    for (const miss of r.misses) {
      const li = el("li", {}, link(doc, miss.seq, "#" + (miss.seq + 1)), " " + miss.method + (miss.tool ? " " + miss.tool : "") + ": " + (miss.message || "no match"));
      misses.append(li);
    }
    if (r.misses.length) parts.push(el("h3", {}, "misses"), misses);
    const unused = el("ul", { class: "panel-list" });
    for (const u of r.unused) {
      const seq = interactionSeq(recorded, u.interaction);
      unused.append(el("li", {}, seq >= 0 ? link(recorded, seq, "#" + u.interaction) : "#" + u.interaction, " " + u.method + (u.tool ? " " + u.tool : "")));
    }
    if (r.unused.length) parts.push(el("h3", {}, "recorded requests no client used"), unused);
    if (r.faults && r.faults.length) {
      const faults = el("ul", { class: "panel-list" });
      for (const f of r.faults) faults.append(el("li", {}, f.method + (f.tool ? " " + f.tool : "") + " (" + f.source + "): fired " + f.fired + " times"));
      parts.push(el("h3", {}, "scripted faults"), faults);
    }
  }
  if (!parts.length) parts.push(el("p", { class: "hint" }, "no replay: this page shows recordings only"));
  details.replaceChildren(...parts);
}

function options(select, values) {
  const first = select.options[0];
  select.replaceChildren(first, ...[...values].sort().map((v) => el("option", { value: v }, v)));
}

function draw() {
  const shown = state.split && state.docs.length > 1 ? [state.shown[0], state.shown[1] ?? (state.shown[0] + 1) % state.docs.length] : [state.shown[0]];
  state.shown = shown;
  const box = document.getElementById("diagrams");
  state.diagrams = shown.map((i) => new Diagram(state.docs[i]));
  box.replaceChildren(...state.diagrams.map((d) => d.root));
  for (const d of state.diagrams) d.render(true);
  const nav = document.getElementById("cassettes");
  nav.replaceChildren(...state.docs.map((d, i) => {
    const live = i < (state.live || 0);
    const b = el("button", { type: "button", class: (shown.includes(i) ? "current" : "") + (live ? " live" : "") }, (live ? "● live: " : "") + d.name + " (" + d.messages.length + ")");
    b.addEventListener("click", () => {
      state.shown = state.split ? [shown[1] ?? i, i].filter((x, k, a) => a.indexOf(x) === k) : [i];
      if (state.split && state.shown.length < 2) state.shown = [i];
      draw();
    });
    return b;
  }));
  document.getElementById("replay-button").hidden = !state.docs.some((d) => d && d.replay);
  const methods = new Set(), tools = new Set();
  for (const i of shown) for (const m of state.docs[i].messages) {
    if (m.method) methods.add(m.method);
    if (m.tool) tools.add(m.tool);
  }
  options(document.getElementById("method"), methods);
  options(document.getElementById("tool"), tools);
  document.getElementById("method").value = state.filter.method;
  document.getElementById("tool").value = state.filter.tool;
}

function relayout() {
  for (const d of state.diagrams) d.relayout();
}

function bind() {
  const on = (id, ev, f) => document.getElementById(id).addEventListener(ev, f);
  on("search", "input", (e) => { state.filter.search = e.target.value.toLowerCase(); relayout(); });
  on("method", "change", (e) => { state.filter.method = e.target.value; relayout(); });
  on("tool", "change", (e) => { state.filter.tool = e.target.value; relayout(); });
  on("dir", "change", (e) => { state.filter.dir = e.target.value; relayout(); });
  on("errors", "change", (e) => { state.filter.errors = e.target.checked; relayout(); });
  on("axis", "change", (e) => { state.axis = e.target.value; relayout(); });
  on("split", "change", (e) => { state.split = e.target.checked; draw(); });
  on("tools-button", "click", showTools);
  on("replay-button", "click", showReplay);
}

load().then((docs) => {
  state.docs = docs;
  bind();
  if (!docs.length) {
    document.getElementById("diagrams").append(el("p", { class: "hint" }, "no cassettes"));
    return;
  }
  draw();
  document.body.dataset.ready = "true";
  document.body.dataset.messages = String(docs[0].messages.length);
  if (state.live) follow();
}).catch((err) => {
  document.getElementById("diagrams").replaceChildren(el("p", { class: "error-text" }, "mcpmock view: " + err));
});
