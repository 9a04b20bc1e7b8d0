"use strict";
// Matches (/matches?bot=…&state=…): GET /api/matches with the same filters.
(async () => {
  const where = document.getElementById("matches");
  const params = new URLSearchParams(location.search);
  document.getElementById("bot").value = params.get("bot") || "";
  document.getElementById("state").value = params.get("state") || "";
  const query = new URLSearchParams();
  for (const key of ["bot", "state"]) if (params.get(key)) query.set(key, params.get(key));
  try {
    const data = await api("/api/matches?" + query.toString());
    if (!data.matches.length) {
      where.replaceChildren(el("p", { class: "muted" }, "No match."));
      return;
    }
    where.replaceChildren(matchTable(data.matches));
  } catch (error) {
    showError(where, error);
  }
})();

function matchTable(matches) {
  const rows = matches.map((m) => ({ ...m, when: m.finished_ms || m.started_ms }));
  return sortableTable([
    { key: "when", label: "When", cell: (m) => when(m.when) },
    { key: "variant", label: "Variant" },
    { key: "state", label: "State", cell: (m) => el("span", { class: "pill " + m.state }, m.state === "finished" ? m.termination : m.state) },
    { key: "seats", label: "Seats (score)", sort: false, cell: (m) => seatList(m) },
    { key: "open", label: "", sort: false, cell: (m) => matchLink(m) },
  ], rows);
}

// A standing arena match's seats are registered bots (a link to their page); another match's
// (an operator's) are only the names it was given.
function seatList(match) {
  const span = el("span");
  match.seats.forEach((seat, i) => {
    if (i) span.append(", ");
    span.append(match.standing ? botLink(seat.bot) : seat.bot, " " + seat.score);
    if (seat.faults) span.append(el("span", { class: "error" }, " ⚠" + seat.faults));
  });
  if (!match.standing) span.append(" ", el("span", { class: "pill", title: "not a standing arena match: not rated" }, "unrated"));
  return span;
}
