"""The page of `arena replay html`: markup, style and script in one template, no network.

`{{CSP}}`, `{{TITLE}}` and `{{DATA}}` are filled in by `arena.replay.html.render_html`; the data's
shape is the one `replay_data` builds. Kept as a Python string so that it ships with the package.
The page's one `<style>` and one code `<script>` are allowed by their hashes (`html.PAGE_CSP`):
keep them free of attributes, and set no inline style or event-handler attribute from the script.
"""

# ruff: noqa: E501  (lines of HTML, CSS and JavaScript, wrapped where they read best)

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{{CSP}}">
<title>{{TITLE}}</title>
<style>
{{TABLE_CSS}}
  :root { --felt: #1f5f3f; --ink: #1d1d1f; --muted: #666; --red: #c0262d; --accent: #f2b632; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.35 system-ui, sans-serif; color: var(--ink); background: #eef0ea; }
  header { padding: 8px 14px; background: #22313f; color: #fff; }
  header h1 { font-size: 16px; margin: 0 0 2px; }
  header .meta { color: #c8d2dc; font-size: 12px; }
  nav { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; padding: 8px 14px; background: #dde3d8; }
  nav button { font: inherit; padding: 3px 9px; border: 1px solid #8a9a88; border-radius: 4px; background: #fff;
    cursor: pointer; }
  nav button.on { background: var(--accent); border-color: #b5851a; font-weight: 600; }
  nav #where { min-width: 190px; text-align: center; font-weight: 600; }
  nav .sep { width: 14px; }
  .banner { padding: 6px 14px; background: #fde2c8; border-bottom: 1px solid #e0a060; }
  main { display: grid; grid-template-columns: minmax(0, 1fr) 360px; gap: 10px; padding: 10px 14px; }
  #table { min-width: 0; }
  aside { display: flex; flex-direction: column; gap: 8px; }
  aside section { background: #fff; border-radius: 8px; padding: 8px 10px; border: 1px solid #d3d8cf; }
  aside h2 { font-size: 13px; margin: 0 0 4px; color: #22313f; }
  .fault { color: #fff; background: var(--red); border-radius: 4px; padding: 2px 6px; display: inline-block;
    margin-top: 4px; }
  .note { color: #7a4b00; }
  .legal { display: flex; flex-wrap: wrap; gap: 3px; margin-top: 4px; }
  .legal .opt { border: 1px solid #bbb; border-radius: 3px; padding: 1px 4px; font-size: 12px; }
  .legal .opt.chosen { background: var(--accent); border-color: #b5851a; font-weight: 600; }
  table.nums { border-collapse: collapse; font-size: 12px; }
  table.nums td, table.nums th { padding: 1px 6px; text-align: right; }
  table.nums th { text-align: left; font-weight: 500; color: var(--muted); }
  #timeline { position: relative; margin: 0 14px 14px; background: #fff; border-radius: 8px; border: 1px solid #d3d8cf;
    padding: 6px 10px; max-height: 240px; overflow: auto; font-size: 12px; }
  #timeline div { display: grid; grid-template-columns: 48px 60px 220px 70px 1fr; gap: 6px; cursor: pointer;
    padding: 1px 2px; }
  #timeline div.now { background: #fff1c9; }
  #timeline div.faulty { color: var(--red); }
  #timeline .bar { height: 8px; background: #8fb3d9; align-self: center; }
  #timeline.analysed div { grid-template-columns: 48px 60px 220px 70px 120px 1fr; }
  #timeline div.costly { background: #fbe0e0; font-weight: 600; }
  #timeline div.costly.now { background: #f7c9b0; }
  .loss { color: #8a1c1c; }
  .mark { color: #fff; background: #b3261e; border-radius: 3px; padding: 0 4px; font-size: 11px; font-weight: 600; }
  .legal .opt .val { color: var(--muted); font-weight: 400; margin-left: 3px; }
  .legal .opt.best { border-color: #2d7a52; box-shadow: inset 0 0 0 1px #2d7a52; }
  #search { margin-top: 6px; padding-top: 6px; border-top: 1px dashed #c9cfc5; }
  #mistakes div { cursor: pointer; padding: 1px 0; }
  #mistakes div.now { background: #fff1c9; }
  footer { padding: 0 14px 14px; color: var(--muted); font-size: 12px; }
  kbd { border: 1px solid #aaa; border-radius: 3px; padding: 0 3px; background: #fff; }
  /* A narrow screen: the panels below the table, the timeline's columns narrower. */
  @media (max-width: 960px) {
    main { grid-template-columns: minmax(0, 1fr); padding: 8px; }
    nav #where { min-width: 0; }
    #timeline { margin: 0 8px 8px; }
    #timeline div, #timeline.analysed div { grid-template-columns: 38px 46px minmax(0, 1fr) 60px; }
    #timeline .bar { display: none; }
    #timeline.analysed div > span:nth-child(5) { grid-column: 3 / 5; }
  }
</style>
</head>
<body>
<header><h1 id="title"></h1><div class="meta" id="meta"></div></header>
<nav>
  <button id="prev-deal" title="previous deal (PageUp)">◀◀ deal</button>
  <button id="prev" title="previous decision (←)">◀ step</button>
  <span id="where"></span>
  <button id="next" title="next decision (→)">step ▶</button>
  <button id="next-deal" title="next deal (PageDown)">deal ▶▶</button>
  <span class="sep"></span><span>view:</span><span id="views"></span>
  <a id="play-on" hidden title="seat a person or a bot here, the recorded bots in the other seats">play on from here</a>
</nav>
<div id="banner" class="banner" hidden></div>
<main>
  <section id="table" aria-label="table"></section>
  <aside>
    <section id="decision" aria-label="decision"></section>
    <section id="mistakes" aria-label="costliest decisions" hidden></section>
    <section id="scores" aria-label="scores"></section>
    <section id="deal-info" aria-label="deal"></section>
  </aside>
</main>
<section id="timeline" aria-label="decisions of this deal"></section>
<footer>Keys: <kbd>←</kbd> <kbd>→</kbd> decision · <kbd>PageUp</kbd> <kbd>PageDown</kbd> deal ·
  <kbd>Home</kbd> <kbd>End</kbd> start and end of the deal · <kbd>a</kbd> every hand ·
  <kbd>0</kbd>…<kbd>3</kbd> one seat's view. The position is in the address (#deal=…&amp;step=…&amp;seat=…).</footer>
<script id="replay-data" type="application/json">{{DATA}}</script>
<script>
{{TABLE_JS}}
const DATA = JSON.parse(document.getElementById("replay-data").textContent);
const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const pos = { deal: 0, step: 0, view: "all" };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "width") node.style.width = value;  // CSSOM: a style attribute would need 'unsafe-inline'
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

const drawn = ArenaTable.create(document.getElementById("table"), { showDeal: false });  // the bar above says where

function signed(values) { return values.map(v => (v > 0 ? "+" + v : String(v))).join(" "); }

function ms(value) { return value >= 10000 && value % 1000 === 0 ? value / 1000 + " s" : value + " ms"; }

function readHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const deal = parseInt(params.get("deal") || "0", 10);
  const step = parseInt(params.get("step") || "0", 10);
  const seat = params.get("seat") || "all";
  pos.deal = Math.min(Math.max(isNaN(deal) ? 0 : deal, 0), Math.max(DATA.deals.length - 1, 0));
  const frames = DATA.deals.length ? DATA.deals[pos.deal].frames.length : 1;
  pos.step = Math.min(Math.max(isNaN(step) ? 0 : step, 0), frames - 1);
  pos.view = /^[0-9]+$/.test(seat) && +seat < DATA.seats ? seat : "all";
}

function writeHash() {
  history.replaceState(null, "", `#deal=${pos.deal}&step=${pos.step}&seat=${pos.view}`);
}

function go(deal, step) {
  if (!DATA.deals.length) return;
  if (deal < 0 || deal >= DATA.deals.length) return;
  const frames = DATA.deals[deal].frames.length;
  pos.deal = deal;
  pos.step = Math.min(Math.max(step, 0), frames - 1);
  render();
}

function stepBy(delta) {
  const frames = DATA.deals[pos.deal].frames.length;
  const step = pos.step + delta;
  if (step >= frames) { if (pos.deal + 1 < DATA.deals.length) go(pos.deal + 1, 0); return; }
  if (step < 0) { if (pos.deal > 0) go(pos.deal - 1, DATA.deals[pos.deal - 1].frames.length - 1); return; }
  go(pos.deal, step);
}

function setView(view) { pos.view = view; render(); }

function renderHeader() {
  const options = Object.entries(DATA.options).map(([k, v]) => `${k}=${v}`).join(", ");
  document.getElementById("title").textContent =
    `${DATA.variant} (${options || "no options"}) · match ${DATA.matchId}`;
  const c = DATA.clock;
  document.getElementById("meta").textContent =
    `seed ${DATA.seed} · ${DATA.dealerTurns} dealer turns · clock ${ms(c.perDecision)} per decision + bank ` +
    `${ms(c.bank)}${c.increment ? " (+" + ms(c.increment) + ")" : ""}` +
    (c.latencyAllowance ? ` · latency allowance up to ${ms(c.latencyAllowance)} per decision` : "") +
    ` · fault policy ${DATA.faultPolicy} · ` +
    DATA.names.map((n, i) => `seat ${i}: ${n}`).join(" · ");
  const views = document.getElementById("views");
  const buttons = [el("button", { "data-view": "all", text: "all hands" })];
  for (let s = 0; s < DATA.seats; s++) buttons.push(el("button", { "data-view": String(s), text: `seat ${s}` }));
  for (const b of buttons) { b.addEventListener("click", () => setView(b.dataset.view)); views.append(b); }
  const banner = document.getElementById("banner");
  const notes = [];
  if (DATA.problem) notes.push("This replay stops being valid at: " + DATA.problem + ". Shown up to there.");
  if (DATA.partial) notes.push("The match had not ended when this log was read (a .jsonl.part file).");
  if (notes.length) { banner.textContent = notes.join(" "); banner.hidden = false; }
}

function render() {
  writeHash();
  for (const b of document.querySelectorAll("#views button")) b.classList.toggle("on", b.dataset.view === pos.view);
  if (!DATA.deals.length) { document.getElementById("where").textContent = "no deal in this replay"; return; }
  const deal = DATA.deals[pos.deal];
  const frame = deal.frames[pos.step];
  const last = deal.frames.length - 1;
  const viewer = pos.view === "all" ? null : +pos.view;
  const pub = frame.public;
  const d = frame.decision || null;
  document.getElementById("where").textContent =
    `deal ${deal.index} · ${pos.step < last ? "decision " + pos.step : "end"} of ${last}`;
  document.getElementById("prev").disabled = pos.deal === 0 && pos.step === 0;
  document.getElementById("next").disabled = pos.deal === DATA.deals.length - 1 && pos.step === last;
  document.getElementById("prev-deal").disabled = pos.deal === 0;
  document.getElementById("next-deal").disabled = pos.deal === DATA.deals.length - 1;
  // On a site that seats people (`arena serve --play`): play on from this decision.
  const playOn = document.getElementById("play-on");
  playOn.hidden = !DATA.playOn || pos.step >= last;
  if (DATA.playOn) playOn.href = `${DATA.playOn}&deal=${pos.deal}&step=${pos.step}`;

  // The table: the position's public state, with the hands this view shows.
  const table = ArenaTable.withViews(frame.table, frame.views, viewer === null ? "all" : viewer);
  for (const seat of table.seats) {
    // The bot its Hello named; a seat's view shows its own only (no seat is told the others').
    if (DATA.bots && (viewer === null || viewer === seat.seat)) seat.detail = DATA.bots[seat.seat];
  }
  const chosen = d && /^(play|discard) [A-Z0-9]+$/.test(d.code) && (viewer === null || viewer === d.seat) ? d.code.split(" ")[1] : null;
  drawn.draw(table, { chosen });

  renderDecision(frame, d, viewer);
  renderMistakes(viewer);
  renderScores(deal, frame, viewer);
  renderDealInfo(deal, frame, viewer);
  renderTimeline(deal, viewer);
}

function renderDecision(frame, d, viewer) {
  const box = document.getElementById("decision");
  box.replaceChildren();
  if (!d) {
    box.append(el("h2", { text: "end of the deal" }));
    box.append(el("div", { text: DATA.deals[pos.deal].result ? "every card is played" :
      "the log stops here" }));
  } else if (viewer === null || viewer === d.seat) {
    const mine = viewer !== null;
    box.append(el("h2", { text: mine ? `your decision (seat ${d.seat})` : `decision ${frame.step} · seat ${d.seat}` }));
    box.append(el("div", { id: "answer", text: `${mine ? "answered" : "played"} ${d.action}` }));
    box.append(el("div", { id: "think",
      text: `think ${d.think} ms of ${d.limit} ms (${DATA.clock.perDecision} + bank ${d.bank})` +
        (d.latency ? ` · ${d.latency.rtt === null ? "no estimate yet" : `rtt ${d.latency.rtt} ms`}, ` +
          `${d.latency.allowed} ms allowed, ${d.latency.charged} ms charged` : "") +
        (d.cpu !== undefined ? ` · ${d.cpu} ms of CPU charged` : "") }));
    const legal = frame.views[d.seat].legal || [];
    const list = el("div", { class: "legal", id: "offered" });
    const a = d.analysis || null;
    for (const option of legal) {
      const opt = el("span", { class: "opt" + (option.code === d.code ? " chosen" : ""), text: option.text });
      if (a && !a.forced) {
        opt.append(el("span", { class: "val", text: points(a.values[option.code]) }));
        if (option.code === a.best) opt.classList.add("best");
      }
      list.append(opt);
    }
    box.append(el("div", { text: `offered ${legal.length}:` }), list);
    if (a) box.append(searchBox(frame.step, d, a));
  } else {
    box.append(el("h2", { text: `decision ${frame.step} · seat ${d.seat}` }));
    box.append(el("div", { id: "answer", text: `seat ${d.seat} ${d.public}` }));
  }
  if (d && d.fault) {
    const referee = viewer === null || viewer === d.seat ? ": the referee played it" : "";
    box.append(el("div", { class: "fault", id: "fault", text: `${d.fault.kind} fault: ${d.fault.detail}${referee}` }));
  }
  for (const note of frame.notes) {
    if (viewer === null || note.seat === viewer) box.append(el("div", { class: "note", text: "⚡ " + note.text }));
  }
}

function points(value) { return (value > 0 ? "+" : value < 0 ? "−" : "") + Math.abs(value).toFixed(2); }

// The decision's rank among its seat's costliest (1 = the costliest), or 0.
function costRank(deal, step, seat) {
  const list = DATA.analysis ? DATA.analysis.costliest[String(seat)] || [] : [];
  const found = list.findIndex(c => c.deal === deal && c.step === step);
  return found + 1;
}

function searchBox(step, d, a) {
  const box = el("div", { id: "search" });
  const budget = DATA.analysis.iterations !== null ? `${DATA.analysis.iterations} iterations` :
    `${DATA.analysis.thinkMs} ms`;
  box.append(el("h2", { text: `the search (${budget}, from seat ${d.seat}'s view)` }));
  if (a.forced) {
    box.append(el("div", { id: "search-loss", text: "the only legal action: nothing to search" }));
    return box;
  }
  box.append(el("div", { id: "search-best", text: `prefers ${a.bestText} (${points(a.values[a.best])} points)` }));
  const played = a.values[d.code];
  box.append(el("div", { id: "search-loss", class: a.loss > 0 ? "loss" : "",
    text: a.loss > 0 ? `played ${d.action} (${points(played)}): estimated loss ${a.loss.toFixed(2)} points` :
      `played ${d.action}, the search's choice (${points(played)})` }));
  const rank = costRank(DATA.deals[pos.deal].index, step, d.seat);
  if (rank) {
    box.append(el("div", {}, el("span", { class: "mark", id: "costly-rank",
      text: `costliest decision ${rank} of seat ${d.seat}` })));
  }
  return box;
}

function renderMistakes(viewer) {
  const box = document.getElementById("mistakes");
  box.replaceChildren();
  if (!DATA.analysis) { box.hidden = true; return; }
  box.hidden = false;
  box.append(el("h2", { text: "costliest decisions (the search's estimate)" }));
  const here = DATA.deals[pos.deal];
  const seats = viewer === null ? DATA.analysis.seats : DATA.analysis.seats.filter(s => s === viewer);
  for (const seat of seats) {
    const list = DATA.analysis.costliest[String(seat)] || [];
    const total = DATA.analysis.totalLoss[String(seat)];
    box.append(el("div", { class: "info", text: `seat ${seat}: estimated loss ${total.toFixed(2)} points in all` }));
    list.forEach((c, i) => {
      // A seat's view lists only what has happened by now: later decisions would show later cards.
      if (viewer !== null && (c.deal > here.index || (c.deal === here.index && c.step > pos.step))) return;
      const line = el("div", { "data-deal": String(c.deal), "data-step": String(c.step), "data-seat": String(seat) },
        el("span", { class: "mark", text: String(i + 1) }),
        ` deal ${c.deal} · #${c.step} · seat ${seat}: played ${c.played}, the search prefers ${c.best} · `,
        el("span", { class: "loss", text: `loss ${c.loss.toFixed(2)}` }));
      if (c.deal === here.index && c.step === pos.step) line.classList.add("now");
      line.addEventListener("click", () => {
        const target = DATA.deals.findIndex(deal => deal.index === c.deal);
        if (target >= 0) go(target, c.step);
      });
      box.append(line);
    });
  }
}

function renderScores(deal, frame, viewer) {
  const box = document.getElementById("scores");
  box.replaceChildren(el("h2", { text: "scores" }));
  const rows = el("table", { class: "nums" });
  const head = el("tr", {}, el("th", { text: "" }));
  for (let s = 0; s < DATA.seats; s++) head.append(el("th", { text: `seat ${s}` }));
  rows.append(head);
  const row = (label, values) => {
    const tr = el("tr", {}, el("th", { text: label }));
    for (const v of values) tr.append(el("td", { text: String(v) }));
    rows.append(tr);
  };
  row("tricks", frame.public.tricks_won);
  row("card points", frame.points);
  const end = frame.public.result;
  if (end) {
    row("deal points", end.card_points);
    row("deltas", signed(end.deltas).split(" "));
    if (deal.scores) row("match", deal.scores);
  }
  box.append(rows);
  if (end && Object.keys(end.pots || {}).length) {
    box.append(el("div", { text: "pots " + Object.entries(end.pots).map(([k, v]) => `${k} ${v > 0 ? "+" : ""}${v}`).join(" ") }));
  }
  if (end && viewer === null && deal.result) {
    const ledger = el("div", { class: "info" });
    ledger.textContent = "payments: " + deal.result.ledger.map(t =>
      `${typeof t.from === "number" ? "seat " + t.from : t.from}→${typeof t.to === "number" ? "seat " + t.to : t.to}` +
      ` ${t.amount} (${t.rule})`).join(", ");
    box.append(ledger);
  }
  if (pos.deal === DATA.deals.length - 1 && end && DATA.matchEnd) {
    box.append(el("div", { text: `match ${DATA.matchEnd.termination} · final ${DATA.matchEnd.scores.join(" ")}` }));
  }
}

function label(id) { return DATA.labels[id] || id.replace(/_/g, " "); }

// The deal's facts in words (the rules' names, as the table's badges say them).
function renderDealInfo(deal, frame, viewer) {
  const box = document.getElementById("deal-info");
  box.replaceChildren(el("h2", { text: `deal ${deal.index}` }));
  const pots = Object.entries(deal.pots);
  box.append(el("div", { text: `dealer seat ${deal.dealer} · forehand seat ${deal.forehand}` +
    (pots.length ? " · at the start: " + pots.map(([k, v]) => `${label(k)} ${v}`).join(", ") : "") }));
  for (const decl of frame.public.declarations) {
    box.append(el("div", { text: `seat ${decl.seat} declared ${label(decl.name)}${decl.suit ? " " + (SUITS[decl.suit] || decl.suit) : ""}` +
      ` (${decl.size} cards, ${decl.value} from each)` }));
  }
  for (const a of frame.public.announcements || []) {
    box.append(el("div", { text: `seat ${a.seat} announced ${label(a.name)} before trick ${a.trick}` }));
  }
  const pub = frame.public;
  if (pub.contract) {
    box.append(el("div", { id: "contract", text: `contract ${label(pub.contract)}` +
      (pub.declarer !== undefined ? ` · declarer seat ${pub.declarer}` : "") +
      (pub.called ? ` · called ${pub.called}` : "") }));
  }
  const partners = viewer === null ? frame.views.map(v => v.partner) : [frame.views[viewer].partner];
  const partner = partners.find(p => p !== undefined);
  if (partner !== undefined) {
    box.append(el("div", { text: partner === -1 ? "the declarer plays alone" : `the declarer's partner: seat ${partner}` }));
  }
  // The omniscient view also shows the American talon while nobody at the table sees it.
  if (!pub.talon && viewer === null && frame.talon.length) {
    const row = el("div", { class: "tc-hand", id: "talon" }, el("span", { class: "tc-count", text: "Talon (hidden from the seats):" }));
    for (const code of frame.talon) row.append(ArenaTable.card(code, "tc-sm"));
    box.append(row);
  }
}

function renderTimeline(deal, viewer) {
  const box = document.getElementById("timeline");
  box.replaceChildren();
  box.classList.toggle("analysed", !!DATA.analysis);
  const longest = Math.max(1, ...deal.frames.map(f => (f.decision ? f.decision.think : 0)));
  for (const frame of deal.frames) {
    const d = frame.decision;
    if (!d) continue;
    if (viewer !== null && frame.step > pos.step) break;  // a seat knows nothing of what comes later
    const own = viewer === null || viewer === d.seat;
    const line = el("div", { "data-step": String(frame.step) },
      el("span", { text: "#" + frame.step }), el("span", { text: "seat " + d.seat }),
      el("span", { text: own ? d.action : d.public }),
      el("span", { text: own ? d.think + " ms" : "" }));
    const rank = own && d.analysis ? costRank(deal.index, frame.step, d.seat) : 0;
    if (DATA.analysis) {
      const lost = own && d.analysis && d.analysis.loss > 0 ? `loss ${d.analysis.loss.toFixed(2)}` : "";
      line.append(el("span", {}, rank ? el("span", { class: "mark", text: `◆ ${rank}` }) : null,
        lost ? el("span", { class: "loss", text: (rank ? " " : "") + lost }) : null));
    }
    line.append(own ? el("span", { class: "bar", width: `${Math.max(2, (100 * d.think) / longest)}%` }) : el("span"));
    if (rank) { line.classList.add("costly"); line.dataset.rank = String(rank); }
    if (frame.step === pos.step) line.classList.add("now");
    if (d.fault) line.classList.add("faulty");
    line.addEventListener("click", () => go(pos.deal, frame.step));
    box.append(line);
  }
  const now = box.querySelector(".now");
  if (now) {  // scroll the list only, never the page
    const top = now.offsetTop;
    if (top < box.scrollTop || top + now.offsetHeight > box.scrollTop + box.clientHeight) {
      box.scrollTop = top - box.clientHeight / 2;
    }
  }
}

document.getElementById("prev").addEventListener("click", () => stepBy(-1));
document.getElementById("next").addEventListener("click", () => stepBy(1));
document.getElementById("prev-deal").addEventListener("click", () => go(pos.deal - 1, 0));
document.getElementById("next-deal").addEventListener("click", () => go(pos.deal + 1, 0));
document.addEventListener("keydown", event => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const deal = DATA.deals[pos.deal];
  const keys = {
    ArrowRight: () => stepBy(1), ArrowLeft: () => stepBy(-1),
    PageDown: () => go(pos.deal + 1, 0), PageUp: () => go(pos.deal - 1, 0),
    ArrowDown: () => go(pos.deal + 1, 0), ArrowUp: () => go(pos.deal - 1, 0),
    Home: () => go(pos.deal, 0), End: () => go(pos.deal, deal ? deal.frames.length - 1 : 0),
    a: () => setView("all"),
  };
  let action = keys[event.key];
  if (!action && /^[0-9]$/.test(event.key) && +event.key < DATA.seats) action = () => setView(event.key);
  if (action) { event.preventDefault(); action(); }
});
window.addEventListener("hashchange", () => { readHash(); render(); });
renderHeader();
readHash();
render();
</script>
</body>
</html>
"""
