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
  state.live = list.length > 0 && list[0].live;
  return Promise.all(list.map(async (c) => (await fetch("api/cassettes/" + c.index)).json()));
}

// follow keeps a live view up to date: the server says when messages came,
// the page fetches the model again and draws it where the reader is.
function follow() {
  const events = new EventSource("api/events");
  let fetching = false;
  events.addEventListener("messages", async (ev) => {
    if (fetching || Number(ev.data) === state.docs[0].messages.length) return;
    fetching = true;
    try {
      const doc = await (await fetch("api/cassettes/0")).json();
      const scroll = state.diagrams.map((d) => d.scroll.scrollTop);
      const atEnd = state.diagrams.map((d) => d.scroll.scrollTop + d.scroll.clientHeight >= d.scroll.scrollHeight - 2 * ROW);
      const selected = state.selected;
      state.docs[0] = doc;
      draw();
      state.diagrams.forEach((d, i) => { d.scroll.scrollTop = atEnd[i] ? d.scroll.scrollHeight : scroll[i]; d.render(true); });
      if (selected && selected.doc && selected.seq < doc.messages.length) select(doc, selected.seq);
      document.body.dataset.messages = String(doc.messages.length);
    } finally {
      fetching = false;
    }
  });
}

// label is the text of a message's arrow.
function label(m) {
  const parts = [];
  if (m.id) parts.push(m.id);
  if (m.kind === "raw") parts.push("(not JSON-RPC)");
  else if (m.kind === "response" || m.kind === "error") parts.push(m.method ? "↩ " + m.method : "↩");
  else parts.push(m.method);
  if (m.tool) parts.push(m.tool);
  if (m.error) parts.push("✗ " + m.error);
  else if (m.summary) parts.push(m.summary);
  if (m.note) parts.push("[" + m.note + "]");
  return parts.join(" ");
}

function matches(m) {
  const f = state.filter;
  if (f.method && m.method !== f.method) return false;
  if (f.tool && m.tool !== f.tool) return false;
  if (f.dir && m.from !== f.dir) return false;
  if (f.errors && !(m.kind === "error" || m.isError)) return false;
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
    const lane = el("div", { class: "lane" });
    const line = svg("svg", { preserveAspectRatio: "none" });
    // The lanes: client at 1/6, mcpmock at 1/2, server at 5/6 of the width.
    const [x1, x2] = m.from === "client" ? ["16.7%", "83.3%"] : ["83.3%", "16.7%"];
    line.append(svg("line", { x1, x2, y1: "70%", y2: "70%" }));
    const head = m.from === "client" ? "▶" : "◀";
    lane.append(line, el("span", { class: "label" }, el("span", { class: "mark" }, m.from === "client" ? "" : head + " "), label(m), m.from === "client" ? " " + head : ""));
    const when = state.axis === "time" && m.atMs > 0 ? m.atMs.toFixed(1) + " ms" : "#" + (m.seq + 1);
    const row = el("div", { class: cls.join(" "), "data-seq": String(m.seq), title: label(m) }, el("span", { class: "when" }, when), lane);
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

function select(doc, seq) {
  state.selected = { doc, seq };
  for (const d of state.diagrams) d.mark();
  const m = doc.messages[seq];
  const details = document.getElementById("details");
  const rows = [
    ["message", "#" + (m.seq + 1) + " of " + doc.messages.length + ", interaction " + m.interaction + ", session " + (m.session + 1)],
    ["from", m.from], ["kind", m.kind], ["id", m.id], ["method", m.method], ["tool", m.tool],
    ["recorded at", m.atMs ? m.atMs + " ms" : "0 (recorded without timing)"], ["batch", m.batch],
  ];
  if (m.pair >= 0) rows.push([m.kind === "request" ? "answered by" : "answers", "#" + (m.pair + 1)]);
  const table = el("table", {});
  for (const [k, v] of rows) if (v !== undefined && v !== "" && v !== 0) table.append(el("tr", {}, el("th", {}, k), el("td", {}, String(v))));
  const parts = [el("h2", {}, label(m)), table];
  if (m.note) parts.push(el("p", {}, "mcpmock: " + m.note));
  if (m.error) parts.push(el("p", { class: "error-text" }, (m.kind === "error" ? "protocol error: " : "tool error: ") + m.error));
  if (m.http) {
    const h = m.http, t = el("table", {});
    for (const [k, v] of [["url", h.url], ["status", h.status], ["form", h.form], ["stream", h.stream], ["event ids", (h.eventIds || []).join(", ")]]) {
      if (v) t.append(el("tr", {}, el("th", {}, k), el("td", {}, String(v))));
    }
    for (const [name, headers] of [["request header", h.requestHeaders], ["response header", h.responseHeaders]]) {
      for (const [k, v] of Object.entries(headers || {})) t.append(el("tr", {}, el("th", {}, name), el("td", {}, k + ": " + v)));
    }
    parts.push(el("h2", {}, "HTTP"), t);
  }
  const result = m.json && m.json.result;
  const content = (result && Array.isArray(result.content) && result.content) || (m.json && m.json.params && Array.isArray(m.json.params.content) && m.json.params.content);
  if (content) parts.push(el("h2", {}, "content"), contentBlocks(content));
  parts.push(el("h2", {}, m.kind === "raw" ? "line" : "message"));
  parts.push(m.kind === "raw" ? el("pre", { class: "json" }, m.raw) : el("div", { class: "json" }, jsonTree(m.json, undefined, 0)));
  details.replaceChildren(...parts);
}

function showTools() {
  const details = document.getElementById("details");
  const parts = [];
  for (const i of state.shown) {
    const doc = state.docs[i];
    parts.push(el("h2", {}, "tools of " + doc.name));
    if (!doc.tools.length) parts.push(el("p", { class: "hint" }, "no tools/list result in this cassette"));
    for (const list of doc.tools) {
      const head = el("p", { class: "changes" }, "listed in #" + (list.seq + 1) + " (session " + (list.session + 1) + "): " + list.tools.length + " tools");
      if (list.added) head.append(el("span", {}, "; added " + list.added.join(", ")));
      if (list.removed) head.append(el("span", {}, "; removed " + list.removed.join(", ")));
      const ul = el("ul", { class: "tools" });
      for (const t of list.tools) {
        const li = el("li", {}, el("strong", {}, t.name), t.description ? el("div", {}, t.description) : null);
        for (const k of ["annotations", "inputSchema", "outputSchema"]) {
          if (t[k]) li.append(el("div", { class: "json" }, jsonTree(t[k], k, 2)));
        }
        ul.append(li);
      }
      parts.push(head, ul);
    }
  }
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
    const b = el("button", { type: "button", class: shown.includes(i) ? "current" : "" }, d.name + " (" + d.messages.length + ")");
    b.addEventListener("click", () => {
      state.shown = state.split ? [shown[1] ?? i, i].filter((x, k, a) => a.indexOf(x) === k) : [i];
      if (state.split && state.shown.length < 2) state.shown = [i];
      draw();
    });
    return b;
  }));
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
