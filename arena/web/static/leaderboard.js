"use strict";
// The leaderboard (/): GET /api/standings?variant=…, one sortable table per variant.
(async () => {
  const board = document.getElementById("board");
  const variant = new URLSearchParams(location.search).get("variant") || "";
  try {
    const data = await api("/api/standings" + (variant ? "?variant=" + encodeURIComponent(variant) : ""));
    const links = [el("a", { href: "/" }, "all variants")];
    for (const name of data.variants) links.push(" · ", el("a", { href: "/?variant=" + encodeURIComponent(name) }, name));
    document.getElementById("variants").replaceChildren("Variants: ", ...links);
    if (!data.standings.length) {
      board.replaceChildren(el("p", { class: "muted" }, "No rated bot yet: the table fills as matches finish."));
      return;
    }
    const columns = [
      { key: "rank", label: "#", num: true },
      { key: "bot", label: "Bot", cell: (r) => botLink(r.bot) },
      { key: "rating", label: "Rating", num: true, cell: (r) => num(r.rating, 2) },
      { key: "sigma", label: "±σ", num: true, cell: (r) => num(r.sigma, 2) },
      { key: "matches", label: "Matches", num: true },
      { key: "deals", label: "Deals", num: true },
      ...POINTS_COLUMNS,
      // "hosted, version N" for a bot the arena runs (docs/SUBMIT.md), else what its Hello declared
      { key: "runs", label: "Version", cell: (r) => r.runs || "—" },
      { key: "last_seen_ms", label: "Last seen", cell: (r) => when(r.last_seen_ms) },
      { key: "connected", label: "Now", cell: (r) => el("span", { class: r.connected ? "pill on" : "pill" }, r.connected ? "connected" : "away") },
      { key: "state", label: "State" },
    ];
    const byVariant = new Map();
    for (const row of data.standings) {
      if (!byVariant.has(row.variant)) byVariant.set(row.variant, []);
      byVariant.get(row.variant).push(row);
    }
    const parts = [];
    for (const [name, rows] of byVariant) {
      rows.forEach((row, i) => { row.rank = i + 1; });
      parts.push(el("h2", {}, el("a", { href: "/?variant=" + encodeURIComponent(name) }, name)));
      parts.push(sortableTable(columns, rows));
    }
    board.replaceChildren(...parts);
  } catch (error) {
    showError(board, error);
  }
})();
