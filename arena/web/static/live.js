"use strict";
// The live table (/matches/ID/live), fed by server-sent events from /api/matches/ID/live:
// `position` (the match so far: scores, the current deal's public events, the table state and
// the rules' names of things), `update` (the public events since), `table` (the table state at
// the end of those events: table.js draws it), `end` (the result; the replay is then at
// /matches/ID). Only public facts ever reach the page: played cards, bids and answers, a discard
// without its card, and a table state with no hand in it.
(() => {
  const matchId = location.pathname.split("/")[2];
  const status = document.getElementById("status");
  const drawn = ArenaTable.create(document.getElementById("table"));
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣", T: "taroks" };
  let match = null;
  let labels = {};
  let log = [];
  let logAt = { deal: -1, step: 0 };  // the decisions the log has told of (the table may be a little behind)

  function name(seat) { return (match.seats[seat] || "seat " + seat); }
  function label(id) { return labels[id] || id.replace(/_/g, " "); }

  // An action as the log says it, in the rules' words (the names come with the position).
  function said(seat, a) {
    const who = name(seat);
    const suit = a.suit ? " " + (SUITS[a.suit] || a.suit) : "";
    switch (a.type) {
      case "play": return `${who}: ${ArenaCards.label(a.card)}` + (a.suit ? " naming" + suit : "");
      case "discard": return `${who} lays away a card`;
      case "bid": return `${who} bids ${label(a.name)}`;
      case "call": return `${who} calls ${ArenaCards.label(a.card)}`;
      case "declare": return `${who} declares ${label(a.name)}${suit}`;
      case "announce": return `${who} announces ${label(a.name)}`;
      case "pass": return `${who} passes`;
      case "redeal": return `${who} claims a redeal`;
      case "demand": return `${who} demands the Fool`;
      default: return `${who}: ${a.type}`;
    }
  }

  function apply(event) {
    if (event.deal_started) {
      log = ["Deal " + (event.deal + 1) + " starts; " + name(event.deal_started.dealer) + " deals."];
      logAt = { deal: event.deal, step: 0 };
    } else if (event.action_taken) {
      log.push(said(event.action_taken.seat, event.action_taken.action));
      logAt.step += 1;
    } else if (event.trick_completed) {
      log.push("Trick " + event.trick_completed.number + " to " + name(event.trick_completed.winner) + ".");
    } else if (event.deal_ended) {
      const e = event.deal_ended;
      log.push("Deal " + (event.deal + 1) + " ends: " + e.deltas.map((d) => (d > 0 ? "+" : "") + d).join(", ") + (e.annulled ? " (annulled)" : "") + ".");
    } else if (event.fault) {
      log.push("Fault of " + name(event.fault.seat) + ": " + event.fault.kind + " — " + event.fault.detail);
    }
  }

  function showLog() {
    const list = document.getElementById("log");
    list.replaceChildren(...log.slice(-40).map((line) => el("li", {}, line)));
    list.dataset.deal = String(logAt.deal);
    list.dataset.step = String(logAt.step);
    list.scrollTop = list.scrollHeight;
  }

  function showTable(table) {
    if (!table) return;
    drawn.draw(table);
    status.textContent = table.status;
  }

  function reset(position) {
    match = position;
    labels = position.labels || {};
    log = [];
    document.getElementById("title").textContent = position.variant + " · match " + position.match_id;
    for (const event of position.events) apply(event);
    showLog();
    if (position.table) showTable(position.table);
    else status.textContent = "Waiting for the bots…";
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
    if (!match) return;
    for (const event of JSON.parse(message.data)) apply(event);
    showLog();
  });
  source.addEventListener("table", (message) => { if (match) showTable(JSON.parse(message.data)); });
  source.addEventListener("end", (message) => { source.close(); ended(JSON.parse(message.data)); });
  source.addEventListener("error", () => { if (source.readyState !== EventSource.CLOSED) status.textContent = "Reconnecting…"; });
})();
