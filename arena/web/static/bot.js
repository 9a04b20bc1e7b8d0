"use strict";
// A bot's page (/bots/NAME): GET /api/bots/NAME. Rating history drawn as an SVG plot.
(async () => {
  const where = document.getElementById("bot");
  const name = decodeURIComponent(location.pathname.slice("/bots/".length));
  try {
    const bot = await api("/api/bots/" + encodeURIComponent(name));
    document.getElementById("name").textContent = bot.name;
    document.title = bot.name + " · Grosstarock Arena";
    const facts = el("dl", { class: "facts" },
      el("dt", {}, "State"), el("dd", {}, bot.state + (bot.connected ? ", connected now" : "")),
      el("dt", {}, "Registered"), el("dd", {}, when(bot.registered_ms)),
      el("dt", {}, "Declares"), el("dd", {}, bot.language ? bot.language + (bot.version ? " " + bot.version : "") : "—"),
      el("dt", {}, "Runs"), el("dd", {}, bot.hosted_version != null ? "hosted, version " + bot.hosted_version : bot.ratings.length ? "dialled in" : "—"),
      el("dt", {}, "Variants"), el("dd", {}, bot.variants.length ? bot.variants.join(", ") : "every variant of the arena"));
    const parts = [facts];
    parts.push(el("h2", {}, "Ratings"));
    parts.push(bot.ratings.length ? sortableTable([
      { key: "variant", label: "Variant" },
      { key: "rating", label: "Rating", num: true, cell: (r) => num(r.rating, 2) },
      { key: "sigma", label: "±σ", num: true, cell: (r) => num(r.sigma, 2) },
      { key: "matches", label: "Matches", num: true },
      ...POINTS_COLUMNS,
      { key: "faults", label: "Faults", num: true },
    ], bot.ratings) : el("p", { class: "muted" }, "Not rated yet."));
    parts.push(el("h2", {}, "Rating history"), plot(bot.history));
    parts.push(el("h2", {}, "Recent matches"));
    parts.push(bot.recent.length ? recentTable(bot) : el("p", { class: "muted" }, "No match yet."));
    parts.push(el("p", {}, el("a", { href: "/matches?bot=" + encodeURIComponent(bot.name) }, "All matches of " + bot.name)));
    parts.push(el("h2", {}, "Head to head"));
    parts.push(bot.head_to_head.length ? sortableTable([
      { key: "opponent", label: "Opponent", cell: (r) => botLink(r.opponent) },
      { key: "matches", label: "Matches", num: true },
      { key: "wins", label: "Won", num: true },
      { key: "draws", label: "Drawn", num: true },
      { key: "losses", label: "Lost", num: true },
    ], bot.head_to_head) : el("p", { class: "muted" }, "No finished match yet."));
    where.replaceChildren(...parts);
  } catch (error) {
    showError(where, error);
  }
})();

function recentTable(bot) {
  const rows = bot.recent.map((m) => {
    const mine = m.seats.findIndex((s) => s.bot === bot.name);
    return { ...m, when: m.finished_ms || m.started_ms, score: mine >= 0 ? m.seats[mine].score : null, faults: mine >= 0 ? m.seats[mine].faults : 0 };
  });
  return sortableTable([
    { key: "when", label: "When", cell: (m) => when(m.when) },
    { key: "variant", label: "Variant" },
    { key: "score", label: "Score", num: true },
    { key: "faults", label: "Faults", num: true },
    { key: "opponents", label: "Opponents", sort: false, cell: (m) => {
      const span = el("span");
      m.seats.filter((s) => s.bot !== bot.name).forEach((s, i) => { if (i) span.append(", "); span.append(botLink(s.bot), " " + s.score); });
      return span;
    } },
    { key: "state", label: "Result", cell: (m) => m.state === "finished" ? m.termination : m.state },
    { key: "open", label: "", sort: false, cell: (m) => matchLink(m) },
  ], rows);
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

// μ − 3σ after each finished match, one line per variant.
function plot(history) {
  if (!history.length) return el("p", { class: "muted" }, "No rated match yet.");
  // Drawn at the width it is shown at, so that its labels keep their size on a phone.
  const shown = document.getElementById("bot").clientWidth;
  const width = Math.max(280, Math.min(900, shown || 600)), height = 220, pad = 36;
  const xs = history.map((p) => p.at_ms), ys = history.map((p) => p.rating);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const sx = (x) => pad + (x1 > x0 ? (x - x0) / (x1 - x0) : 0.5) * (width - 2 * pad);
  const sy = (y) => height - pad - (y1 > y0 ? (y - y0) / (y1 - y0) : 0.5) * (height - 2 * pad);
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "plot", role: "img" });
  const title = svg("title", {});
  title.textContent = "Rating (μ − 3σ) after each match";
  chart.append(title);
  chart.append(svg("line", { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, stroke: "#9aa3b5" }));
  chart.append(svg("line", { x1: pad, y1: pad, x2: pad, y2: height - pad, stroke: "#9aa3b5" }));
  for (const [y, label] of [[y0, num(y0, 1)], [y1, num(y1, 1)]]) {
    const text = svg("text", { x: 4, y: sy(y) + 4, "font-size": 13, fill: "#5c6577" });
    text.textContent = label;
    chart.append(text);
  }
  const colours = ["#1f5fbf", "#b3261e", "#2e7d32", "#8e44ad", "#c77700"];
  const variants = [...new Set(history.map((p) => p.variant))];
  variants.forEach((variant, i) => {
    const points = history.filter((p) => p.variant === variant);
    const colour = colours[i % colours.length];
    chart.append(svg("polyline", { points: points.map((p) => `${sx(p.at_ms)},${sy(p.rating)}`).join(" "), fill: "none", stroke: colour, "stroke-width": 2 }));
    for (const p of points) chart.append(svg("circle", { cx: sx(p.at_ms), cy: sy(p.rating), r: 3, fill: colour }));
    const label = svg("text", { x: Math.max(pad + 4, width - pad - 120), y: pad + 14 * i, "font-size": 13, fill: colour });
    label.textContent = variant;
    chart.append(label);
  });
  return chart;
}
