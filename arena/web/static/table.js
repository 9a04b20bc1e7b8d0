"use strict";
// The drawn table: one component for the live table, the replay viewer and a person's seat.
//
//   const table = ArenaTable.create(element, { onAction(code) { ... }, showDeal: true });
//   table.draw(state);   // a table state (schema 1, built by arena/replay/table.py; docs/REPLAYS.md)
//   table.destroy();     // stops its clock
//
// It draws the seats around the table (names, scores, the dealer, badges for bids, answers,
// declarations and announcements, clocks ticking from their deadline), the trick in play, the
// last trick, the piles (talon, skat, laid-away cards) as the rules show them, the Danish pots,
// the American contract and the partner once this view knows him, and the hands the state holds
// (a spectator's state holds none). When the state has `legal` (the viewing seat is to act),
// its legal cards are highlighted and clickable and its other actions are buttons; a click calls
// `onAction(code)` with the action's code ("play SK", "bid rufer", "pass"). `onAction` may also
// be given per draw: `table.draw(state, { onAction, chosen })`; `chosen` is a card code to mark.
// Needs cards.js (ArenaCards) and table.css. Sets no style attribute (the pages' policies forbid
// inline style); every text from the state goes in as text, never as HTML.
const ArenaTable = (() => {
  function h(tag, attrs, ...children) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") n.className = v;
      else n.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      n.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return n;
  }

  function card(code, extra) {
    const c = h("span", { class: "tc-card" + (extra ? " " + extra : ""), "data-card": code, title: ArenaCards.label(code) });
    c.append(ArenaCards.face(code));
    return c;
  }

  function back(extra) {
    const c = h("span", { class: "tc-card tc-back" + (extra ? " " + extra : "") });
    c.append(ArenaCards.back());
    return c;
  }

  function seconds(ms) {
    if (ms <= 0) return "0.0 s";
    return ms < 10000 ? (ms / 1000).toFixed(1) + " s" : Math.floor(ms / 60000) + ":" + String(Math.floor(ms / 1000) % 60).padStart(2, "0");
  }

  // Where a seat sits, seen from the seat at the bottom.
  function place(seat, bottom, n) {
    const rel = (seat - bottom + n) % n;
    return (n === 4 ? ["bottom", "left", "top", "right"] : ["bottom", "left", "right"])[rel];
  }

  function create(root, options) {
    options = options || {};
    let onAction = options.onAction || null;
    let state = null;
    root.classList.add("tc-table");
    const timer = setInterval(tick, 200);

    function tick() {
      for (const clock of root.querySelectorAll(".tc-clock[data-deadline]")) {
        const left = +clock.dataset.deadline - Date.now();
        clock.textContent = seconds(left) + " left";
        clock.classList.toggle("tc-low", left < 3000);
      }
    }

    function act(code) { if (onAction) onAction(code); }

    function seatName(s) {
      const seat = state.seats[s];
      return seat ? seat.name : "seat " + s;
    }

    function seatBox(seat, where, big) {
      const roles = [];
      if (seat.dealer) roles.push(h("span", { class: "tc-chip tc-dealer", title: "the dealer" }, "D"));
      if (seat.role === "declarer") roles.push(h("span", { class: "tc-chip tc-declarer" }, "declarer"));
      if (seat.role === "partner") roles.push(h("span", { class: "tc-chip tc-partner" }, "partner"));
      if (seat.out) roles.push(h("span", { class: "tc-chip" }, "sits out"));
      const box = h("section", { class: `tc-seat tc-${where}` + (seat.acting ? " tc-acting" : "") + (seat.out ? " tc-out" : ""),
        "data-seat": seat.seat, "aria-label": "seat " + seat.seat },
        h("div", { class: "tc-head" }, h("span", { class: "tc-name" }, seat.name), ...roles),
        h("div", { class: "tc-info" }, `seat ${seat.seat}` + (seat.score !== null ? ` · score ${seat.score}` : "") +
          ` · ${seat.tricks} trick${seat.tricks === 1 ? "" : "s"}` + (seat.points !== null ? ` · ${seat.points} pts` : "")),
        seat.detail ? h("div", { class: "tc-info tc-detail" }, seat.detail) : null);
      if (seat.clock) {
        const c = seat.clock;
        if (c.deadline_ms && seat.acting) {
          // The deadline is the server's time: counted on this page's clock from when the state was made.
          const skew = state.now_ms ? Date.now() - state.now_ms : 0;
          box.append(h("div", { class: "tc-clock", "data-deadline": c.deadline_ms + skew, title: "time left for this decision" }, ""));
        } else if (c.bank_ms) {
          box.append(h("div", { class: "tc-clock tc-still" }, "bank " + seconds(c.bank_ms)));
        }
      }
      if (seat.badges.length) {
        box.append(h("div", { class: "tc-badges" }, ...seat.badges.map((b) => h("span", { class: "tc-badge tc-" + b.kind }, b.text))));
      }
      if (!big) {
        const hand = h("div", { class: "tc-hand tc-small", "data-hand": seat.seat });
        if (seat.hand) for (const code of seat.hand) hand.append(card(code, "tc-sm"));
        else for (let i = 0; i < seat.hand_size; i++) hand.append(back("tc-sm"));
        hand.append(h("span", { class: "tc-count" }, seat.hand_size + (seat.hand_size === 1 ? " card" : " cards")));
        box.append(hand);
        if (seat.pile && seat.pile.length) box.append(pileRow(seat.pile, "tc-sm"));
      }
      return box;
    }

    function pileRow(cards, size) {
      const label = state.variant === "american" ? "laid away" : "skat";
      return h("div", { class: "tc-hand tc-own-pile" }, h("span", { class: "tc-count" }, label + ":"), ...cards.map((c) => card(c, size)));
    }

    function trickView(cards, winner, cls) {
      return h("div", { class: "tc-trick " + cls }, ...cards.map(([seat, code]) =>
        h("figure", { class: "tc-play" + (seat === winner ? " tc-won" : "") + ` tc-at-${place(seat, bottomSeat(), state.seats.length)}` },
          card(code), h("figcaption", {}, seatName(seat)))));
    }

    function contractText(c) {
      const parts = [c.label];
      if (c.declarer !== null) parts.push("declarer " + seatName(c.declarer));
      if (c.called) parts.push("called " + ArenaCards.label(c.called));
      if (c.partner !== null) parts.push(c.partner === -1 ? "plays alone" : "partner " + seatName(c.partner));
      return parts.join(" · ");
    }

    function bottomSeat() { return typeof state.view === "number" ? state.view : 0; }

    function center() {
      const box = h("section", { class: "tc-center", "aria-label": "the table" });
      const deal = state.deal !== null && options.showDeal !== false ? `deal ${state.deal + 1}` + (state.deals ? ` of ${state.deals}` : "") + " · " : "";
      box.append(h("div", { class: "tc-status" }, deal + state.status));
      if (state.contract) box.append(h("div", { class: "tc-contract" }, contractText(state.contract)));
      if (state.trick) {
        box.append(trickView(state.trick.cards, null, "tc-now"));
        if (state.trick.note) box.append(h("div", { class: "tc-note" }, state.trick.note));
      } else if (state.last_trick) {
        const t = state.last_trick;
        box.append(trickView(t.cards, t.winner, "tc-done"));
        box.append(h("div", { class: "tc-note" }, `trick ${t.number} to ${seatName(t.winner)}` + (t.points !== null ? ` (${t.points} pts)` : "")));
      } else {
        box.append(h("div", { class: "tc-trick tc-empty" }));
      }
      const side = h("div", { class: "tc-side" });
      if (state.trick && state.last_trick) {
        const t = state.last_trick;
        side.append(h("div", { class: "tc-last" }, h("span", { class: "tc-label" }, `last trick (${seatName(t.winner)})`),
          h("div", { class: "tc-hand" }, ...t.cards.map(([, code]) => card(code, "tc-sm")))));
      }
      for (const pile of state.piles) {
        const row = h("div", { class: "tc-pile", "data-pile": pile.id }, h("span", { class: "tc-label" }, pile.label + (pile.note ? ` (${pile.note})` : "")));
        const cards = h("div", { class: "tc-hand" });
        for (const code of pile.cards) cards.append(card(code, "tc-sm"));
        for (let i = 0; i < pile.count; i++) cards.append(back("tc-sm"));
        row.append(cards);
        side.append(row);
      }
      if (state.pots.length) {
        side.append(h("div", { class: "tc-pots" }, ...state.pots.map((p) => h("span", { class: "tc-pot", "data-pot": p.name }, `${p.label} ${p.amount}`))));
      }
      if (state.result) {
        const r = state.result;
        side.append(h("div", { class: "tc-result" }, r.annulled ? "annulled" : "deltas " + r.deltas.map((d) => (d > 0 ? "+" : "") + d).join(" ")));
      }
      if (side.childNodes.length) box.append(side);
      return box;
    }

    function mine(seat) {
      const legal = state.legal || [];
      // A play or a discard of one card is a click on that card; every other action is a button
      // (a call, a bid, a pass, a declaration, a Fool led naming a suit).
      const isCard = (a) => (a.type === "play" || a.type === "discard") && a.code.split(" ").length === 2;
      const cards = new Map(legal.filter(isCard).map((a) => [a.card, a]));
      const box = h("section", { class: "tc-mine", "aria-label": "your hand" });
      const hand = h("div", { class: "tc-hand tc-big", "data-hand": seat.seat });
      for (const code of seat.hand || []) {
        const a = cards.get(code);
        const c = card(code, a ? "tc-legal" : legal.length && cards.size ? "tc-dim" : null);
        if (a) {
          c.setAttribute("role", "button");
          c.setAttribute("tabindex", "0");
          c.dataset.action = a.code;
          c.addEventListener("click", () => act(a.code));
          c.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); act(a.code); } });
        }
        hand.append(c);
      }
      box.append(hand);
      if (seat.pile && seat.pile.length) box.append(pileRow(seat.pile, "tc-sm"));
      const buttons = legal.filter((a) => !isCard(a));
      if (buttons.length) {
        box.append(h("div", { class: "tc-actions" }, ...buttons.map((a) => {
          const b = h("button", { type: "button", class: "tc-action", "data-action": a.code }, a.text);
          b.addEventListener("click", () => act(a.code));
          return b;
        })));
      }
      return box;
    }

    function draw(next, opts) {
      state = next;
      if (opts && opts.onAction) onAction = opts.onAction;
      // `chosen`: a card to mark in the hands (the replay marks the card its decision plays).
      const chosen = opts && opts.chosen && /^[A-Z0-9]+$/.test(opts.chosen) ? opts.chosen : null;
      const n = state.seats.length;
      const bottom = bottomSeat();
      const felt = h("div", { class: `tc-felt tc-n${n}` });
      for (const seat of state.seats) {
        const where = place(seat.seat, bottom, n);
        felt.append(seatBox(seat, where, where === "bottom" && seat.hand !== null && typeof state.view === "number"));
      }
      felt.append(center());
      // Where the drawn position is, for whoever reads the page (a test compares it with the replay).
      root.dataset.variant = state.variant;
      root.dataset.deal = state.deal === null ? "" : String(state.deal);
      root.dataset.step = state.step === null ? "" : String(state.step);
      const parts = [felt];
      const me = state.seats[bottom];
      if (typeof state.view === "number" && me) parts.push(mine(me));
      root.replaceChildren(...parts);
      if (chosen) for (const c of root.querySelectorAll(`.tc-seat .tc-card[data-card="${chosen}"], .tc-mine .tc-card[data-card="${chosen}"]`)) c.classList.add("chosen");
      tick();
    }

    return {
      draw,
      destroy() { clearInterval(timer); root.replaceChildren(); },
      get state() { return state; },
    };
  }

  // A public table state (no hand in it) with the cards of the seats whose views are given: each
  // `views[seat]` is {hand, skat, partner, legal} as that seat's observation has them. `view` is
  // the seat shown (its legal actions too, when it is to act) or "all" (every view given). The
  // replay viewer keeps one public state per position and the seats' views beside it.
  function withViews(publicState, views, view) {
    const state = JSON.parse(JSON.stringify(publicState));
    state.view = view;
    const shown = view === "all" ? views.map((_, s) => s) : [view];
    let partner = state.contract ? state.contract.partner : null;
    for (const s of shown) {
      const v = views[s];
      if (!v || !state.seats[s]) continue;
      state.seats[s].hand = v.hand.slice();
      state.seats[s].pile = v.skat ? v.skat.slice() : null;
      if (partner === null && v.partner !== undefined && v.partner !== null) partner = v.partner;
    }
    if (state.contract && partner !== null) {
      state.contract.partner = partner;
      for (const seat of state.seats) if (seat.seat === partner && seat.role === null) seat.role = "partner";
    }
    if (typeof view === "number" && state.to_act === view && views[view] && views[view].legal) {
      state.legal = views[view].legal;
    }
    return state;
  }

  return { create, card, back, withViews };
})();
