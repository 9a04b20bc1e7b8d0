"use strict";
// The live table (/matches/ID/live), fed by server-sent events from /api/matches/ID/live:
// `position` (the match so far: scores, and the current deal's public events), `update`
// (the public events since), `end` (the result; the replay is then at /matches/ID).
// Only public events ever reach the page: played cards, bids and answers, a discard without its card.
(() => {
  const matchId = location.pathname.split("/")[2];
  const status = document.getElementById("status");
  let table = null;

  function reset(position) {
    table = { seats: position.seats, scores: position.scores.slice(), deal: null, dealer: null,
      deals: position.deals, dealsDone: position.deals_done, trick: [], won: position.seats.map(() => 0), log: [] };
    document.getElementById("title").textContent = position.variant + " · match " + position.match_id;
    for (const event of position.events) apply(event);
    draw();
  }

  function seatName(seat) { return (table.seats[seat] || "seat " + seat) + " (" + seat + ")"; }

  function apply(event) {
    if (event.deal_started) {
      table.deal = event.deal; table.dealer = event.deal_started.dealer; table.trick = [];
      table.won = table.seats.map(() => 0); table.log = [];
      table.log.push("Deal " + (event.deal + 1) + " starts; dealer " + seatName(table.dealer) + ".");
    } else if (event.action_taken) {
      const { seat, action } = event.action_taken;
      if (action.type === "play") table.trick.push({ seat, card: action.card });
      const detail = [action.card, action.suit, action.name].filter((x) => x).join(" ");
      table.log.push(seatName(seat) + ": " + action.type + (detail ? " " + detail : ""));
    } else if (event.trick_completed) {
      const { number, winner } = event.trick_completed;
      table.won[winner] += 1; table.lastTrick = table.trick; table.trick = [];
      table.log.push("Trick " + number + " to " + seatName(winner) + ".");
    } else if (event.deal_ended) {
      table.scores = event.deal_ended.scores.slice(); table.dealsDone = event.deal + 1;
      table.log.push("Deal " + (event.deal + 1) + " ends: " + event.deal_ended.deltas.join(", ") + (event.deal_ended.annulled ? " (annulled)" : "") + ".");
    } else if (event.fault) {
      table.log.push("Fault of " + seatName(event.fault.seat) + ": " + event.fault.kind + " — " + event.fault.detail);
    }
  }

  function card(code) {
    const red = /^[HD]/.test(code);
    return el("span", { class: red ? "card red" : "card", "data-card": code }, code);
  }

  function draw() {
    status.textContent = "Deal " + (table.deal === null ? "—" : table.deal + 1) + " of " + table.deals + " · " + table.dealsDone + " done";
    document.getElementById("seats").replaceChildren(...table.seats.map((name, seat) => el("div", { class: "seat" },
      el("div", { class: "name" }, name), el("div", { class: "muted" }, "seat " + seat + (seat === table.dealer ? " · dealer" : "")),
      el("div", {}, "score " + table.scores[seat]), el("div", {}, "tricks " + table.won[seat]))));
    const trick = table.trick.length ? table.trick : table.lastTrick || [];
    document.getElementById("trick").replaceChildren(...trick.map((p) => el("span", {}, card(p.card), el("small", { class: "muted" }, table.seats[p.seat]))));
    const log = document.getElementById("log");
    log.replaceChildren(...table.log.slice(-40).map((line) => el("li", {}, line)));
    log.scrollTop = log.scrollHeight;
  }

  function ended(result) {
    const banner = el("div", { class: "banner" }, "The match is over (" + (result.termination || result.state) + ")" +
      (result.scores ? ", scores " + result.scores.join(", ") : "") + ". ");
    if (result.has_replay) banner.append(el("a", { href: "/matches/" + encodeURIComponent(result.match_id), id: "replay" }, "Open the replay"));
    document.getElementById("end").replaceChildren(banner);
    status.textContent = "Finished.";
  }

  const source = new EventSource("/api/matches/" + encodeURIComponent(matchId) + "/live");
  source.addEventListener("position", (message) => reset(JSON.parse(message.data)));
  source.addEventListener("update", (message) => {
    if (!table) return;
    for (const event of JSON.parse(message.data)) apply(event);
    draw();
  });
  source.addEventListener("end", (message) => { source.close(); ended(JSON.parse(message.data)); });
  source.addEventListener("error", () => { if (source.readyState !== EventSource.CLOSED) status.textContent = "Reconnecting…"; });
})();
