// trawl console: polls /api/status once a second and draws it; sends changes with the token
// in the X-Trawl-Token header. Everything from the crawl is shown as text (textContent),
// never as markup: URLs and host names come from the web.
"use strict";

const $ = (id) => document.getElementById(id);
const POLL_MS = 1000;

function fmt(n) {
  return n === null || n === undefined ? "-" : Number(n).toLocaleString("en-US");
}

function bytes(n) {
  if (n === null || n === undefined) return "-";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return n.toFixed(i ? 1 : 0) + " " + units[i];
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
  return td;
}

function fillTable(id, rows) {
  const body = $(id);
  body.replaceChildren();
  for (const values of rows) {
    const tr = document.createElement("tr");
    for (const v of values) cell(tr, v);
    body.appendChild(tr);
  }
}

function entries(map) {
  return Object.entries(map || {}).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, fmt(v)]);
}

// Rates over the last `span` samples.
function rates(history) {
  const out = [];
  for (let i = 1; i < history.length; i++) {
    const a = history[i - 1], b = history[i];
    const dt = (b.t_ms - a.t_ms) / 1000;
    if (dt <= 0) continue;
    out.push({ t: b.t_ms, pages: (b.pages - a.pages) / dt, mb: (b.bytes - a.bytes) / dt / 1e6 });
  }
  return out;
}

function drawChart(points) {
  const canvas = $("chart");
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height, pad = 28;
  ctx.clearRect(0, 0, w, h);
  ctx.strokeStyle = "#ccc";
  ctx.strokeRect(pad, 4, w - pad - 4, h - pad);
  if (points.length < 2) return;
  const series = [["pages", "#2b6cb0"], ["mb", "#c05621"]];
  for (const [key, color] of series) {
    const max = Math.max(1e-9, ...points.map((p) => p[key]));
    ctx.strokeStyle = color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    points.forEach((p, i) => {
      const x = pad + (i / (points.length - 1)) * (w - pad - 6);
      const y = 4 + (h - pad) * (1 - p[key] / max);
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    });
    ctx.stroke();
    ctx.fillStyle = color;
    ctx.fillText(key === "pages" ? max.toFixed(1) + " p/s" : max.toFixed(2) + " MB/s",
      key === "pages" ? pad + 4 : w - 90, h - 8);
  }
}

function render(s) {
  $("crawl-id").textContent = s.crawl_id || "";
  const state = $("state");
  state.textContent = s.state || "?";
  state.className = "badge " + (s.state || "");
  $("updated").textContent = "updated " + new Date().toLocaleTimeString();
  $("search-panel").hidden = !s.search;
  $("pages").textContent = fmt(s.pages);
  $("queued").textContent = fmt(s.queued);
  $("in-flight").textContent = fmt(s.in_flight);
  const hc = s.hosts || {};
  $("hosts").textContent = [hc.active, hc.waiting, hc.seen, hc.given_up].map(fmt).join(" / ");
  $("warc").textContent = s.warc ? s.warc.name + " (" + bytes(s.warc.bytes) + ")" : "-";
  $("rss").textContent = bytes(s.peak_rss_bytes);
  const r = rates(s.history || []);
  const last = r.slice(-5);
  const avg = (k) => last.length ? last.reduce((a, p) => a + p[k], 0) / last.length : 0;
  $("pages-rate").textContent = avg("pages").toFixed(1);
  $("bytes-rate").textContent = avg("mb").toFixed(2);
  drawChart(r);

  fillTable("busiest", (s.busiest || []).map((b) =>
    [b.name, fmt(b.queued), (b.next_in_ms / 1000).toFixed(1) + " s", b.fetching ? "yes" : ""]));
  fillTable("status-codes", entries(s.status_codes));
  fillTable("errors", entries(s.errors));
  fillTable("filtered", entries(s.filtered).filter((e) => e[1] !== "0"));

  const recent = $("recent");
  recent.replaceChildren();
  for (const f of s.recent || []) {
    const tr = document.createElement("tr");
    cell(tr, (f.at || "").slice(11, 19));
    cell(tr, f.status === null || f.status === undefined ? "-" : String(f.status));
    cell(tr, f.outcome);
    cell(tr, fmt(f.bytes));
    cell(tr, fmt(f.ms));
    cell(tr, f.url, "url");
    recent.appendChild(tr);
  }

  const settings = s.settings || {};
  if (document.activeElement !== $("delay")) $("delay").value = settings.delay_ms;
  const list = $("excludes");
  list.replaceChildren();
  for (const p of settings.excludes || []) {
    const li = document.createElement("li");
    const code = document.createElement("code");
    code.textContent = p;
    const b = document.createElement("button");
    b.textContent = "Remove";
    b.addEventListener("click", () => send("/api/excludes/remove", { pattern: p }));
    li.append(code, " ", b);
    list.appendChild(li);
  }
  const whole = $("whole-crawl");
  whole.hidden = !s.crawl;
  if (s.crawl) $("crawl").textContent = JSON.stringify(s.crawl, null, 2);
}

async function poll() {
  try {
    const res = await fetch("/api/status", { cache: "no-store" });
    if (!res.ok) throw new Error(res.status);
    render(await res.json());
  } catch (e) {
    const state = $("state");
    state.textContent = "offline";
    state.className = "badge offline";
  } finally {
    setTimeout(poll, POLL_MS);
  }
}

function say(text, error) {
  const m = $("message");
  m.textContent = text;
  m.className = error ? "error" : "";
}

async function send(path, body) {
  const token = $("token").value.trim();
  if (!token) { say("enter the console token first", true); return; }
  sessionStorage.setItem("trawl-token", token);
  try {
    const res = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Trawl-Token": token },
      body: JSON.stringify(body || {}),
    });
    const answer = await res.json().catch(() => ({ ok: false, error: "HTTP " + res.status }));
    say(answer.ok ? answer.message : answer.error, !answer.ok);
  } catch (e) {
    say("the console does not answer: " + e, true);
  }
}

// A snippet with its matched ranges marked, built as DOM nodes (the text is the web's: never
// parsed as HTML).
function snippetNode(hit) {
  const p = document.createElement("p");
  const text = hit.snippet || "";
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const bytes = enc.encode(text);
  let at = 0;
  for (const [start, end] of hit.highlights || []) {
    if (start < at || end > bytes.length) continue;
    p.appendChild(document.createTextNode(dec.decode(bytes.slice(at, start))));
    const mark = document.createElement("mark");
    mark.textContent = dec.decode(bytes.slice(start, end));
    p.appendChild(mark);
    at = end;
  }
  p.appendChild(document.createTextNode(dec.decode(bytes.slice(at))));
  return p;
}

async function search(event) {
  event.preventDefault();
  const q = $("search-query").value.trim();
  const list = $("search-hits");
  list.replaceChildren();
  if (!q) return;
  try {
    const res = await fetch("/api/search?limit=20&q=" + encodeURIComponent(q), { cache: "no-store" });
    const answer = await res.json();
    if (!answer.ok) { $("search-summary").textContent = answer.error; return; }
    $("search-summary").textContent =
      `${fmt(answer.total)} hit(s) among ${fmt(answer.pages)} page(s) indexed`;
    for (const hit of answer.hits) {
      const li = document.createElement("li");
      const title = document.createElement("strong");
      title.textContent = hit.title || "(no title)";
      const meta = document.createElement("div");
      meta.className = "small muted";
      meta.textContent = `${hit.url} · ${hit.date} · ${hit.status} · ${hit.warc_file} @ ${hit.offset}`;
      li.append(title, meta, snippetNode(hit));
      list.appendChild(li);
    }
  } catch (e) {
    $("search-summary").textContent = "the console does not answer: " + e;
  }
}

function init() {
  // A token in the fragment (#token=...) is never sent to the server; keep it for this tab.
  const m = /(?:^|[#&])token=([0-9A-Za-z._~-]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem("trawl-token", m[1]);
    history.replaceState(null, "", location.pathname);
  }
  $("token").value = sessionStorage.getItem("trawl-token") || "";
  $("pause").addEventListener("click", () => send("/api/pause"));
  $("resume").addEventListener("click", () => send("/api/resume"));
  $("stop").addEventListener("click", () => {
    if (confirm("Stop the crawl? It can be resumed later.")) send("/api/stop");
  });
  $("set-delay").addEventListener("click", () =>
    send("/api/delay", { ms: Number($("delay").value) }));
  $("add-exclude").addEventListener("click", () =>
    send("/api/excludes/add", { pattern: $("exclude").value }));
  $("add-seeds").addEventListener("click", () =>
    send("/api/seeds", { urls: $("seeds").value.split("\n").map((s) => s.trim()).filter(Boolean) }));
  $("drop").addEventListener("click", () => send("/api/hosts/drop", { host: $("drop-host").value.trim() }));
  $("search-form").addEventListener("submit", search);
  poll();
}

document.addEventListener("DOMContentLoaded", init);
