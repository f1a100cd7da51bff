// The kbroker web console: plain JavaScript, no build step. Pages are routed by the URL's #fragment and drawn from
// the admin listener's JSON API (/api/..., kbroker/monitoring/console_api.py).
"use strict";

const main = document.getElementById("main");
const statusLine = document.getElementById("status");
let timer = null;          // the current page's refresh, cancelled when the page changes
const lagHistory = {};     // group -> [[time, total lag]...], kept while the console is open

function esc(value) {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}
function enc(value) { return encodeURIComponent(value); }
function bytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + units[i];
}
async function api(method, path, body) {
  const options = { method, headers: {} };
  // every change carries a JSON body: the admin listener refuses changes without one (another site's forms)
  if (method !== "GET") { options.body = JSON.stringify(body ?? {}); options.headers["content-type"] = "application/json"; }
  const response = await fetch("/api/" + path, options);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}
function table(headers, rows, numeric = []) {
  const head = headers.map((h, i) => `<th class="${numeric.includes(i) ? "num" : ""}">${esc(h)}</th>`).join("");
  const body = rows.map((r) => "<tr>" + r.map((c, i) => `<td class="${numeric.includes(i) ? "num" : ""}">${c}</td>`).join("") + "</tr>").join("");
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}
function confirmAction(text, extra) {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-extra").innerHTML = extra || "";
  return new Promise((resolve) => {
    dialog.onclose = () => resolve(dialog.returnValue === "ok");
    dialog.showModal();
  });
}
function setActive(name) {
  document.querySelectorAll("header nav a").forEach((a) => a.classList.toggle("active", a.dataset.nav === name));
}
function fail(error) { main.innerHTML = `<p class="error">${esc(error.message || error)}</p>`; }

// ---- cluster ----------------------------------------------------------------------------------------------------

async function clusterPage() {
  setActive("cluster");
  const c = await api("GET", "cluster");
  const brokers = c.brokers.map((b) => [esc(b.id) + (b.id === c.controller ? " (controller)" : ""), esc(b.host), esc(b.port), esc(b.rack ?? "–")]);
  main.innerHTML = `
    <h1>Cluster ${esc(c.cluster_id)}</h1>
    <div class="cards">
      <div class="card">Mode<b>${esc(c.mode)}</b></div>
      <div class="card">Brokers<b>${c.brokers.length}</b></div>
      <div class="card">Topics<b>${c.topics}</b></div>
      <div class="card">Partitions<b>${c.partitions}</b></div>
      <div class="card">Under-replicated<b class="${c.under_replicated ? "bad" : "ok"}">${c.under_replicated}</b></div>
      <div class="card">Offline<b class="${c.offline ? "bad" : "ok"}">${c.offline}</b></div>
    </div>
    <h2>Nodes</h2>
    ${table(["Node", "Host", "Port", "Rack"], brokers)}
    <p class="muted">This console is served by node ${esc(c.node_id)}. Metrics: <a href="/metrics">/metrics</a>,
      health: <a href="/health/ready">/health/ready</a>.</p>`;
}

// ---- topics -----------------------------------------------------------------------------------------------------

async function topicsPage() {
  setActive("topics");
  const topics = await api("GET", "topics");
  main.innerHTML = `
    <h1>Topics (${topics.length})</h1>
    <form class="inline" id="create-topic">
      <label>Name<input name="name" required placeholder="events"></label>
      <label>Partitions<input name="partitions" type="number" min="1" placeholder="default"></label>
      <label>Replication factor<input name="replication_factor" type="number" min="1" placeholder="default"></label>
      <label>Configs (key=value, one a line)<textarea name="configs" rows="1" placeholder="retention.ms=86400000"></textarea></label>
      <button>Create topic</button>
    </form>
    <div id="topic-notice"></div>
    <form class="inline" onsubmit="return false"><label>Filter<input id="topic-filter" placeholder="name contains…"></label></form>
    <div id="topic-table"></div>`;
  const draw = () => {
    const filter = document.getElementById("topic-filter").value.toLowerCase();
    const rows = topics.filter((t) => t.name.toLowerCase().includes(filter)).map((t) => [
      `<a href="#/topics/${enc(t.name)}">${esc(t.name)}</a>${t.internal ? ' <span class="muted">internal</span>' : ""}`,
      t.partitions, t.replication_factor,
      t.under_replicated ? `<span class="bad">${t.under_replicated}</span>` : "0",
      t.offline ? `<span class="bad">${t.offline}</span>` : "0",
      bytes(t.local_bytes),
    ]);
    document.getElementById("topic-table").innerHTML = table(
      ["Topic", "Partitions", "Replicas", "Under-replicated", "Offline", "Size on this node"], rows, [1, 2, 3, 4, 5]);
  };
  document.getElementById("topic-filter").addEventListener("input", draw);
  draw();
  document.getElementById("create-topic").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const name = form.get("name");
    const configs = {};
    for (const line of String(form.get("configs")).split("\n")) {
      const i = line.indexOf("=");
      if (i > 0) configs[line.slice(0, i).trim()] = line.slice(i + 1).trim();
    }
    if (!(await confirmAction(`Create topic ${name}?`))) return;
    const notice = document.getElementById("topic-notice");
    try {
      await api("POST", "topics", { name, partitions: Number(form.get("partitions")) || null,
        replication_factor: Number(form.get("replication_factor")) || null, configs });
      location.hash = "#/topics/" + enc(name);
    } catch (error) { notice.innerHTML = `<p class="error">${esc(error.message)}</p>`; }
  });
}

function showBytes(data, mode) {
  if (data === null || data === undefined) return '<span class="muted">null</span>';
  const raw = atob(data.base64);
  if (mode === "hex") return esc(Array.from(raw, (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join(" "));
  if (data.text === null) return '<span class="muted">binary, ' + data.size + " bytes</span>";
  if (mode === "json") { try { return esc(JSON.stringify(JSON.parse(data.text), null, 2)); } catch (e) { /* not JSON: text */ } }
  return esc(data.text);
}

async function topicPage(name) {
  setActive("topics");
  const t = await api("GET", "topics/" + enc(name));
  const partitions = t.partitions.map((p) => [
    p.partition, p.leader >= 0 ? p.leader : '<span class="bad">none</span>', p.leader_epoch, esc(p.replicas.join(",")),
    p.isr.length < p.replicas.length ? `<span class="bad">${esc(p.isr.join(","))}</span>` : esc(p.isr.join(",")),
    p.log_start_offset ?? "–", p.high_watermark ?? "–", bytes(p.local_bytes),
  ]);
  const configs = t.configs.map((c) => [esc(c.name), esc(c.value ?? "null"), esc(c.source)]);
  const options = t.partitions.map((p) => `<option>${p.partition}</option>`).join("");
  main.innerHTML = `
    <h1>Topic ${esc(t.name)}</h1>
    <p class="muted">Topic id ${esc(t.topic_id)} · ${t.partitions.length} partitions · replication factor ${t.replication_factor}</p>
    <h2>Partitions</h2>
    ${table(["Partition", "Leader", "Epoch", "Replicas", "ISR", "Log start", "High watermark", "Size on this node"], partitions, [0, 2, 5, 6, 7])}
    <h2>Messages</h2>
    <form class="inline" id="browse">
      <label>Partition<select name="partition">${options}</select></label>
      <label>From offset<input name="offset" type="number" min="0" placeholder="earliest"></label>
      <label>or from time<input name="time" placeholder="2026-01-31T12:00:00"></label>
      <label>Limit<input name="limit" type="number" value="20" min="1" max="500"></label>
      <label>Show values as<select name="mode"><option>text</option><option>json</option><option>hex</option></select></label>
      <button>Browse</button>
    </form>
    <div id="messages"></div>
    <h2>Produce a test message</h2>
    <form class="inline" id="produce">
      <label>Partition<select name="partition"><option value="">by key</option>${options}</select></label>
      <label>Key<input name="key" placeholder="(none)"></label>
      <label>Value<input name="value" required placeholder="hello"></label>
      <label>Headers (k=v, comma-separated)<input name="headers" placeholder="source=console"></label>
      <button>Produce</button>
    </form>
    <div id="produced"></div>
    <h2>Configs</h2>
    ${table(["Config", "Value", "Source"], configs)}
    <h2>Delete</h2>
    <button class="danger" id="delete-topic">Delete topic ${esc(t.name)}</button>
    <div id="delete-notice"></div>`;
  document.getElementById("browse").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const query = new URLSearchParams({ partition: form.get("partition"), limit: form.get("limit") });
    if (form.get("offset")) query.set("offset", form.get("offset"));
    else if (form.get("time")) query.set("time", form.get("time"));
    const target = document.getElementById("messages");
    try {
      const page = await api("GET", `topics/${enc(name)}/messages?${query}`);
      const mode = form.get("mode");
      const rows = page.messages.map((m) => [m.offset, esc(new Date(m.timestamp).toISOString()),
        `<pre class="value">${showBytes(m.key, mode)}</pre>`, `<pre class="value">${showBytes(m.value, mode)}</pre>`,
        `<pre class="value">${m.headers.map(([k, v]) => esc(k) + "=" + showBytes(v, mode)).join("\n")}</pre>`]);
      target.innerHTML = `<p class="muted">${page.messages.length} messages of partition ${page.partition} from offset ${page.start} (high watermark ${page.high_watermark})</p>`
        + table(["Offset", "Timestamp", "Key", "Value", "Headers"], rows, [0]);
    } catch (error) { target.innerHTML = `<p class="error">${esc(error.message)}</p>`; }
  });
  document.getElementById("produce").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const headers = {};
    for (const item of String(form.get("headers")).split(",")) {
      const i = item.indexOf("=");
      if (i > 0) headers[item.slice(0, i).trim()] = item.slice(i + 1).trim();
    }
    const target = document.getElementById("produced");
    try {
      const r = await api("POST", `topics/${enc(name)}/messages`, { partition: form.get("partition"),
        key: form.get("key") || null, value: form.get("value"), headers });
      target.innerHTML = `<p class="notice">Produced to partition ${r.partition} at offset ${r.offset}</p>`;
    } catch (error) { target.innerHTML = `<p class="error">${esc(error.message)}</p>`; }
  });
  document.getElementById("delete-topic").addEventListener("click", async () => {
    const ok = await confirmAction(`Delete topic ${t.name} and all its records?`,
      `<label>Type the topic's name to confirm <input id="confirm-name"></label>`);
    const typed = document.getElementById("confirm-name").value;
    const target = document.getElementById("delete-notice");
    if (!ok) return;
    if (typed !== t.name) { target.innerHTML = '<p class="error">The name typed does not match: nothing deleted.</p>'; return; }
    try {
      await api("DELETE", "topics/" + enc(name));
      location.hash = "#/topics";
    } catch (error) { target.innerHTML = `<p class="error">${esc(error.message)}</p>`; }
  });
}

// ---- consumer groups --------------------------------------------------------------------------------------------

async function groupsPage() {
  setActive("groups");
  const groups = await api("GET", "groups");
  const rows = groups.map((g) => [`<a href="#/groups/${enc(g.group)}">${esc(g.group)}</a>`, esc(g.state), esc(g.protocol_type || "–"), g.coordinator]);
  main.innerHTML = `<h1>Consumer groups (${groups.length})</h1>` + table(["Group", "State", "Protocol type", "Coordinator"], rows, [3]);
}

function sparkline(points) {
  if (points.length < 2) return '<span class="muted">collecting…</span>';
  const w = 360, h = 60, max = Math.max(1, ...points.map((p) => p[1]));
  const t0 = points[0][0], t1 = points[points.length - 1][0] || t0 + 1;
  const xy = points.map(([t, v]) => `${((t - t0) / Math.max(t1 - t0, 1) * (w - 4) + 2).toFixed(1)},${(h - 2 - v / max * (h - 4)).toFixed(1)}`);
  return `<svg class="spark" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><rect width="${w}" height="${h}" fill="#f5f7fa"/>` +
    `<polyline fill="none" stroke="#2457c5" stroke-width="2" points="${xy.join(" ")}"/></svg> <span class="muted">max ${max}</span>`;
}

async function groupPage(id) {
  setActive("groups");
  const draw = async () => {
    const g = await api("GET", "groups/" + enc(id));
    const history = (lagHistory[id] = lagHistory[id] || []);
    history.push([Date.now(), g.total_lag]);
    if (history.length > 120) history.shift();
    const members = g.members.map((m) => [esc(m.member_id), esc(m.client_id), esc(m.host),
      esc(m.assignment.map(([t, p]) => `${t}-${p}`).join(", ") || "–")]);
    const partitions = g.partitions.map((p) => [esc(p.topic), p.partition, p.committed >= 0 ? p.committed : "–", p.log_end,
      p.lag === null ? "–" : p.lag, esc(p.member_id || "–")]);
    main.innerHTML = `
      <h1>Consumer group ${esc(g.group)}</h1>
      <div class="cards">
        <div class="card">State<b>${esc(g.state)}</b></div>
        <div class="card">Members<b>${g.members.length}</b></div>
        <div class="card">Total lag<b>${g.total_lag}</b></div>
        <div class="card">Coordinator<b>${g.coordinator}</b></div>
      </div>
      <h2>Lag over time</h2>
      <div id="lag-chart">${sparkline(history)}</div>
      <h2>Members</h2>
      ${members.length ? table(["Member", "Client id", "Host", "Assigned partitions"], members) : '<p class="muted">No active members.</p>'}
      <h2>Offsets and lag</h2>
      ${table(["Topic", "Partition", "Committed", "Log end", "Lag", "Member"], partitions, [1, 2, 3, 4])}`;
  };
  await draw();
  timer = setInterval(() => draw().catch(fail), 5000);
}

// ---- routing ----------------------------------------------------------------------------------------------------

async function route() {
  if (timer) { clearInterval(timer); timer = null; }
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const started = performance.now();
  try {
    if (parts[0] === "topics" && parts[1]) await topicPage(parts.slice(1).join("/"));
    else if (parts[0] === "topics") await topicsPage();
    else if (parts[0] === "groups" && parts[1]) await groupPage(parts.slice(1).join("/"));
    else if (parts[0] === "groups") await groupsPage();
    else await clusterPage();
    statusLine.textContent = `updated ${new Date().toLocaleTimeString()} in ${Math.round(performance.now() - started)} ms`;
    // when the page was drawn, in ms since the navigation started (bench/console_load.py reads it)
    document.body.dataset.drawnAt = String(Math.round(performance.now()));
    document.body.dataset.ready = location.hash || "#/";
  } catch (error) { fail(error); }
}
window.addEventListener("hashchange", route);
route();
