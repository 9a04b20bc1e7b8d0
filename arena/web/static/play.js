// A person at a table: the form that starts one (/play), and the table itself (/play/ID#token=…).
// The page shows only what the referee sends this seat (its link's messages, read by long polling
// with the seat's token, which stays in the URL fragment and is never sent in an address), and
// sends the person's clicks as answers, which the referee judges as a bot's: a refused one comes
// back with the rule's message and id. Every value goes into the page as text.
"use strict";

(() => {
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣", T: "tarok" };
  const path = location.pathname.split("/").filter((x) => x);
  const $ = (id) => document.getElementById(id);
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  function cardText(code) {
    if (code === "EX") return "Fool";
    if (code[0] === "T") return code.slice(1);
    return (SUITS[code[0]] || code[0]) + code.slice(1);
  }

  function actionText(a) {
    const suit = a.suit ? " naming " + (SUITS[a.suit] || a.suit) : "";
    if (a.type === "play") return cardText(a.card) + suit;
    if (a.type === "discard") return "discard " + cardText(a.card);
    if (a.type === "call") return "call " + cardText(a.card);
    if (a.type === "declare") return "declare " + a.name.replace(/_/g, " ") + (a.suit ? " " + (SUITS[a.suit] || a.suit) : "");
    if (a.type === "announce") return "announce " + a.name.replace(/_/g, " ");
    if (a.type === "bid") return "bid " + a.name;
    return a.type;
  }

  // ------------------------------------------------------------------ the form

  async function setup() {
    $("setup").hidden = false;
    const form = $("start");
    const query = new URLSearchParams(location.search);
    const from = query.get("from");
    const playOn = from ? { from, deal: Number(query.get("deal") || 0), step: Number(query.get("step") || 0) } : null;
    let options;
    try {
      options = await api("/api/play" + (from ? "?from=" + encodeURIComponent(from) : ""));
    } catch (error) {
      showError($("setup-error"), error);
      form.hidden = true;
      return;
    }
    if (!playOn) lobby(options);
    let seatNames = null;
    for (const [name, limit] of Object.entries(options.limits)) {
      const input = form.elements[name];
      Object.assign(input, { min: limit.min, max: limit.max, value: limit.default });
    }
    const variant = form.elements.variant;
    variant.replaceChildren(...options.variants.map((v) => el("option", { value: v }, v)));
    if (playOn) {
      const recorded = options.from;
      seatNames = recorded.seats.map((name, s) => name + (recorded.bots[s] ? ", " + recorded.bots[s] : ""));
      variant.value = recorded.variant;
      $("variant-row").hidden = true;
      $("deals-row").hidden = true;
      $("title").textContent = "Play on from here";
      $("from").hidden = false;
      const where = () => {
        const deal = Number(form.elements.deal.value), step = Number(form.elements.step.value);
        const decisions = recorded.decisions[deal];
        $("from").textContent = `Match ${from} (${recorded.variant}), deal ${deal}, decision ${step}` +
          (decisions === undefined ? " (the match has no such deal)" : ` of ${decisions}`) +
          ": the recorded decisions before it are played again, then the seats play on.";
      };
      for (const row of form.querySelectorAll(".position")) row.hidden = false;
      form.elements.deal.max = recorded.decisions.length - 1;
      Object.assign(form.elements.deal, { value: playOn.deal });
      Object.assign(form.elements.step, { value: playOn.step });
      form.elements.deal.addEventListener("input", where);
      form.elements.step.addEventListener("input", where);
      where();
    }
    function seats() {
      const count = options.seats[variant.value];
      const seat = form.elements.seat;
      const chosen = seat.options.length ? seat.value : null; // null: the first drawing
      const choices = [];
      for (let s = 0; s < count; s++) choices.push(el("option", { value: s }, "seat " + s + (seatNames ? " (" + seatNames[s] + ")" : "")));
      if (playOn) choices.push(el("option", { value: "" }, "none: bots only (watch)"));
      seat.replaceChildren(...choices);
      if (chosen !== null && (chosen === "" || Number(chosen) < count)) seat.value = chosen;
      const bots = [];
      for (let s = 0; s < count; s++) {
        if (String(s) === seat.value) continue;
        const select = el("select", { name: "bot-" + s, "data-seat": s });
        if (playOn) select.append(el("option", { value: "" }, "as recorded"));
        for (const bot of options.bots) {
          select.append(el("option", { value: bot }, bot === "connect" ? "your bot (dials in with a seat token)" : bot));
        }
        if (!playOn) select.value = "random";
        bots.push(el("label", {}, "Seat " + s + (seatNames ? " (" + seatNames[s] + ")" : ""), select));
      }
      $("bots").replaceChildren(...bots);
    }
    variant.addEventListener("change", seats);
    form.elements.seat.addEventListener("change", seats);
    seats();
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const f = form.elements;
      const body = { per_decision_s: Number(f.per_decision_s.value), bank_s: Number(f.bank_s.value), name: f.name.value };
      const selects = [...$("bots").querySelectorAll("select")];
      if (playOn) {
        const position = { deal: Number(f.deal.value), step: Number(f.step.value) };
        Object.assign(body, playOn, position, { seat: f.seat.value === "" ? null : Number(f.seat.value), bots: {} });
        for (const s of selects) if (s.value) body.bots[s.dataset.seat] = s.value;
      } else {
        Object.assign(body, { variant: f.variant.value, seat: Number(f.seat.value), deals: Number(f.deals.value) });
        body.bots = selects.map((s) => s.value);
      }
      $("go").disabled = true;
      try {
        const response = await fetch("/api/play", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify(body),
        });
        const answer = await response.json();
        if (!response.ok) throw new Error(answer.error || response.statusText);
        if (!answer.seat_tokens) {
          location.assign(answer.url);
          return;
        }
        // Seats left for the person's own bots: their tokens, shown once, then on to the table.
        const lines = Object.entries(answer.seat_tokens).map(([seat, token]) =>
          el("li", {}, `seat ${seat}: `, el("code", { class: "seat-token", "data-seat": seat }, `ARENA_TOKEN=${token}`)));
        $("setup").replaceChildren(el("h2", {}, "Start your bot"),
          el("p", {}, `Within ${answer.connect_wait_s} seconds, start your bot with ARENA_ADDRESS set to this server's ` +
            "gRPC address and the seat's token (the Python SDK reads both; --address and --token work too):"),
          el("ul", {}, ...lines),
          el("p", {}, el("a", { href: answer.url, id: "to-table" }, answer.token ? "go to your seat" : "watch the table")));
      } catch (error) {
        showError($("setup-error"), error);
        $("go").disabled = false;
      }
    });
  }

  // ------------------------------------------------------------------ the lobby's queue

  // A registered player joins the standing arena's lobby for a variant; the lobby seats them as
  // it seats bots (or at once with the bots chosen, waiting there now), then the page goes to
  // the seat. The player's token goes in a POST body only; the place's own token then speaks
  // for the place, and for the seat once seated.
  function lobby(options) {
    if (!options.lobby) return;
    $("lobby").hidden = false;
    const form = $("join");
    const f = form.elements;
    for (const name of ["per_decision_s", "bank_s"]) {
      const limit = options.limits[name];
      Object.assign(f[name], { min: limit.min, max: limit.max, value: limit.default });
    }
    f.variant.replaceChildren(...options.lobby.variants.map((v) => el("option", { value: v }, v)));
    function opponents() {
      const count = options.seats[f.variant.value] - 1;
      const waiting = Object.entries(options.lobby.waiting).filter(([, variants]) => variants.includes(f.variant.value));
      const rows = [];
      for (let i = 0; i < count; i++) {
        const select = el("select", { name: "opponent-" + i }, el("option", { value: "" }, "whoever the lobby seats"));
        for (const [bot] of waiting) select.append(el("option", { value: bot }, bot));
        rows.push(el("label", {}, "Opponent " + (i + 1), select));
      }
      $("opponents").replaceChildren(...rows);
    }
    f.variant.addEventListener("change", opponents);
    opponents();
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const chosen = [...$("opponents").querySelectorAll("select")].map((s) => s.value).filter((v) => v);
      const body = {
        token: f.token.value, variant: f.variant.value, opponents: chosen,
        per_decision_s: Number(f.per_decision_s.value), bank_s: Number(f.bank_s.value),
      };
      $("join-go").disabled = true;
      $("join-error").replaceChildren();
      let place;
      try {
        const response = await fetch("/api/play/lobby", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify(body),
        });
        place = await response.json();
        if (!response.ok) throw new Error(place.error || response.statusText);
      } catch (error) {
        showError($("join-error"), error);
        $("join-go").disabled = false;
        return;
      }
      const token = place.token;
      const headers = { authorization: "Bearer " + token, accept: "application/json" };
      form.hidden = true;
      $("waiting").hidden = $("join-leave").hidden = false;
      $("join-leave").onclick = () => fetch(`/api/play/lobby/${place.place}`, { method: "DELETE", headers });
      while (place.state === "waiting") {
        $("waiting").textContent = `${place.bot} waits in the lobby for a table of ${place.variant}…`;
        try {
          // Not through the browser's cache: a poll that waits there would hold back the DELETE
          // of the same address until it ends.
          const response = await fetch(`/api/play/lobby/${place.place}`, { headers, cache: "no-store" });
          const answer = await response.json();
          if (!response.ok) throw new Error(answer.error || response.statusText);
          place = answer;
        } catch (error) {
          await sleep(1000); // the server is away for a moment: ask again
        }
      }
      $("join-leave").hidden = true;
      if (place.state === "seated") {
        location.assign(place.url);
        return;
      }
      $("waiting").textContent = `Out of the queue: ${place.reason}.`;
      form.hidden = false;
      $("join-go").disabled = false;
    });
  }

  // ------------------------------------------------------------------ the table

  // The drawn table (table.js) shows each request's table state, which the server builds from
  // that request's view alone; the page adds the refusals, the end and a log of the events.
  const table = { start: null, request: null, state: null, rendered: 0, sending: false, drawn: null };

  function seatName(seat) {
    const names = table.start ? table.start.seat_names : [];
    return names[seat] || "seat " + seat;
  }

  function ready(value) {
    // For a reader of the page (and its tests): the request being shown, and how often it was drawn.
    document.body.dataset.ready = value;
  }

  function log(text) {
    const list = $("log");
    list.append(el("li", {}, text));
  }

  function onEvent(event) {
    const deal = event.deal;
    if (event.deal_started) {
      $("log").replaceChildren();
      log(`deal ${deal}: ${seatName(event.deal_started.dealer)} deals`);
    } else if (event.action_taken) {
      const { seat, action } = event.action_taken;
      log(`${seatName(seat)}: ${action.type === "discard" ? "discard" : actionText(action)}`);
    } else if (event.trick_completed) {
      log(`${seatName(event.trick_completed.winner)} wins trick ${event.trick_completed.number}`);
    } else if (event.fault) {
      log(`fault of ${seatName(event.fault.seat)}: ${event.fault.kind} (${event.fault.detail})`);
    } else if (event.deal_ended) {
      const ended = event.deal_ended;
      log(`deal ${deal} ends${ended.annulled ? " (annulled)" : ""}: ` +
        ended.deltas.map((d, s) => `${seatName(s)} ${d >= 0 ? "+" : ""}${d}`).join(", "));
    }
  }

  function draw() {
    if (!table.state) return;
    const mine = table.request !== null && !table.sending;
    const state = Object.assign({}, table.state, { legal: mine ? table.state.legal : null });
    if (!table.drawn) table.drawn = ArenaTable.create($("felt"), { onAction: (code) => send(code) });
    table.drawn.draw(state);
    if (mine) {
      // A card that is not lit can still be clicked: the referee says which rule forbids it.
      const verb = state.phase === "discard" ? "discard" : "play";
      for (const card of $("felt").querySelectorAll(".tc-mine [data-hand] .tc-card:not(.tc-legal)")) {
        card.classList.add("illegal");
        card.addEventListener("click", () => send(`${verb} ${card.dataset.card}`));
      }
    }
    $("status").textContent = mine ? "Your turn" : table.request === null ? "Waiting…" : "Sent…";
  }

  async function send(code) {
    const request = table.request;
    if (!request || table.sending) return;
    table.sending = true;
    $("rejected").textContent = "";
    ready("");
    draw();
    try {
      const response = await fetch(`/api/play/${encodeURIComponent(path[1])}/action`, {
        method: "POST",
        headers: { authorization: "Bearer " + token(), "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ request_id: Number(request.request_id), code }),
      });
      if (!response.ok) throw new Error((await response.json()).error || response.statusText);
    } catch (error) {
      table.sending = false;
      $("rejected").textContent = String(error.message || error);
      draw();
      ready(`${request.request_id}:${++table.rendered}`);
    }
  }

  function setDeadline(ms) {
    const me = table.state.seats[table.start.seat];
    if (me && me.clock) me.clock.deadline_ms = Date.now() + ms;
  }

  function onMessage(message) {
    if (message.match_start) {
      table.start = message.match_start;
      $("title").textContent = `${table.start.variant} · seat ${table.start.seat}`;
    } else if (message.request) {
      const request = message.request;
      for (const event of request.events || []) onEvent(event);
      table.request = request;
      table.state = message.table;
      table.sending = false;
      setDeadline(request.time_limit_ms);
      $("rejected").textContent = "";
    } else if (message.rejected) {
      const rejected = message.rejected;
      if (table.request && rejected.request_id === table.request.request_id) {
        table.sending = false;
        setDeadline(rejected.time_left_ms);
        $("rejected").replaceChildren(el("strong", {}, "Refused: "), rejected.reason + " ", el("code", { class: "rule" }, rejected.rule));
      }
    } else if (message.events) {
      for (const event of message.events.events || []) onEvent(event);
    } else if (message.match_end) {
      const end = message.match_end;
      table.request = null;
      $("end").replaceChildren(el("h2", {}, "Match over (" + end.termination + ")"),
        el("p", {}, end.scores.map((score, s) => `${seatName(s)}: ${score}`).join(" · ")),
        el("p", {}, el("a", { href: "/matches/" + encodeURIComponent(path[1]), id: "replay-link" }, "the replay"), " · ",
          el("a", { href: "/play?from=" + encodeURIComponent(path[1]), id: "play-on-link" }, "play on from one of its positions")));
    }
  }

  function token() {
    return new URLSearchParams(location.hash.slice(1)).get("token") || "";
  }

  async function play() {
    $("table").hidden = false;
    if (!token()) {
      $("status").replaceChildren(el("span", { class: "error" }, "This address has no seat token (#token=…): start a table from the Play page."));
      return;
    }
    let next = 0;
    for (;;) {
      let body;
      try {
        const response = await fetch(`/api/play/${encodeURIComponent(path[1])}/messages?after=${next}`, {
          headers: { authorization: "Bearer " + token(), accept: "application/json" },
        });
        body = await response.json();
        if (!response.ok) {
          $("status").replaceChildren(el("span", { class: "error" }, body.error || response.statusText));
          ready("refused");
          return;
        }
      } catch (error) {
        await sleep(1000); // the server is away for a moment: ask again
        continue;
      }
      const before = table.request;
      for (const message of body.messages) onMessage(message);
      next = body.next;
      if (!body.open) {
        table.request = null;
        draw();
        $("status").textContent = "The match is " + body.state + ".";
        ready("ended");
        return;
      }
      if (body.messages.length) {
        draw();
        if (table.request && !table.sending) ready(`${table.request.request_id}:${++table.rendered}`);
        else if (before !== table.request) ready("");
      }
    }
  }

  if (path.length === 2) play();
  else setup();
})();
