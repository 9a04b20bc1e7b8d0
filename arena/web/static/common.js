// Shared helpers of the pages. Every value from the API goes into the page as text
// (textContent, setAttribute), never as HTML: a name like <script> shows as typed.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path) {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function when(ms) {
  if (ms === null || ms === undefined) return "—";
  const date = new Date(ms);
  return date.toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

function num(value, digits) {
  return typeof value === "number" ? value.toFixed(digits) : "—";
}

// The two columns of a bot's points per deal (docs/ARENA.md, "Luck taken out of the ratings"):
// raw, as played, and less the cards' luck. A variant rated on raw points (american), or a bot
// with no adjusted match, says "not adjusted": a 0 there would read as a measured mean.
const ADJUSTED_TITLE = "Points per deal less the luck of the cards (grosstarock, danish, german-1754); the ratings rank by them";
const POINTS_COLUMNS = [
  { key: "mean_score_per_deal", label: "Raw pts/deal", num: true, wrap: true, title: "Points per deal as played",
    cell: (r) => num(r.mean_score_per_deal, 2) },
  { key: "mean_adjusted_score_per_deal", label: "Luck-adjusted pts/deal", num: true, wrap: true, title: ADJUSTED_TITLE,
    cell: (r) => typeof r.mean_adjusted_score_per_deal === "number"
      ? r.mean_adjusted_score_per_deal.toFixed(2) : el("span", { class: "muted" }, "not adjusted") },
];

function botLink(name) {
  return el("a", { href: "/bots/" + encodeURIComponent(name) }, name);
}

function matchLink(match) {
  const live = match.state === "running" || match.state === "waiting";
  const href = "/matches/" + encodeURIComponent(match.match_id) + (live ? "/live" : "");
  const label = live ? "watch live" : match.has_replay ? "replay" : match.state;
  return el("a", { href }, label);
}

function showError(where, error) {
  where.replaceChildren(el("p", { class: "error" }, String(error.message || error)));
}

// A table whose columns sort on a click. columns: [{key, label, num, title, wrap, cell(row) -> node|text}]
// (wrap: a long header may take two lines)
function sortableTable(columns, rows, initial) {
  let key = initial ? initial.key : null;
  let descending = initial ? initial.descending : false;
  const table = el("table");
  const head = el("tr");
  for (const column of columns) {
    const classes = [column.num ? "num" : "", column.wrap ? "wrap" : ""].join(" ").trim();
    const th = el("th", { class: classes || null, "data-key": column.sort === false ? null : column.key, title: column.title }, column.label);
    if (column.sort !== false) {
      th.addEventListener("click", () => {
        descending = key === column.key ? !descending : !!column.num;
        key = column.key;
        fill();
      });
    }
    head.append(th);
  }
  const body = el("tbody");
  table.append(el("thead", {}, head), body);
  function fill() {
    const sorted = rows.slice();
    if (key) {
      sorted.sort((a, b) => {
        const x = a[key], y = b[key];
        const order = x === y ? 0 : x === null || x === undefined ? 1 : y === null || y === undefined ? -1 : x < y ? -1 : 1;
        return descending ? -order : order;
      });
    }
    body.replaceChildren(...sorted.map((row) => el("tr", {}, ...columns.map((c) => el("td", { class: c.num ? "num" : null }, c.cell ? c.cell(row) : row[c.key])))));
  }
  fill();
  return el("div", { class: "scroll" }, table);
}
