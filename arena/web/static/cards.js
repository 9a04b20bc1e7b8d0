"use strict";
// The 78 cards as SVG, drawn here (no image file, no font glyph for the suits): the four suits
// with their pips and courts, the 21 taroks with their numbers, the Fool. ArenaCards.face(code)
// gives a new <svg> of a card (codes as in RULES §6: SK, H10, DC, T21, EX), ArenaCards.back()
// a card's back. Only attributes are set (no style attribute), so a page whose policy forbids
// inline style can use it; the replay file inlines this script.
const ArenaCards = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const RED = "#c0262d", BLACK = "#1d1d1f", GOLD = "#b5851a";
  // Each suit's shape in a 10 × 10 box.
  const SHAPES = {
    H: [["path", { d: "M5 9.6C4.2 8.7 0 5.9 0 3 0 1.2 1.3 0 2.8 0 3.8 0 4.6.6 5 1.5 5.4.6 6.2 0 7.2 0 8.7 0 10 1.2 10 3 10 5.9 5.8 8.7 5 9.6Z" }]],
    D: [["path", { d: "M5 0 9 5 5 10 1 5Z" }]],
    S: [["path", { d: "M5 0C3.6 2 0 4.2 0 6.4 0 7.8 1.1 8.7 2.4 8.7 3.3 8.7 4 8.2 4.4 7.6 4.3 8.6 3.8 9.4 3 10H7C6.2 9.4 5.7 8.6 5.6 7.6 6 8.2 6.7 8.7 7.6 8.7 8.9 8.7 10 7.8 10 6.4 10 4.2 6.4 2 5 0Z" }]],
    C: [["circle", { cx: 5, cy: 2.6, r: 2.4 }], ["circle", { cx: 2.4, cy: 6.3, r: 2.4 }],
      ["circle", { cx: 7.6, cy: 6.3, r: 2.4 }], ["path", { d: "M4.4 5.5 3.3 10H6.7L5.6 5.5Z" }]],
  };
  const NAMES = { S: "Spades", H: "Hearts", D: "Diamonds", C: "Clubs" };
  const RANKS = { A: "Ace", J: "Jack", C: "Cavalier", Q: "Queen", K: "King" };
  const L = 20, M = 30, R = 40;
  const PIPS = {
    1: [[M, 45]], 2: [[M, 24], [M, 66]], 3: [[M, 24], [M, 45], [M, 66]],
    4: [[L, 24], [R, 24], [L, 66], [R, 66]],
    5: [[L, 24], [R, 24], [M, 45], [L, 66], [R, 66]],
    6: [[L, 24], [R, 24], [L, 45], [R, 45], [L, 66], [R, 66]],
    7: [[L, 24], [R, 24], [M, 34], [L, 45], [R, 45], [L, 66], [R, 66]],
    8: [[L, 24], [R, 24], [M, 34], [L, 45], [R, 45], [M, 56], [L, 66], [R, 66]],
    9: [[L, 22], [R, 22], [L, 38], [R, 38], [M, 45], [L, 52], [R, 52], [L, 68], [R, 68]],
    10: [[L, 22], [R, 22], [M, 30], [L, 38], [R, 38], [L, 52], [R, 52], [M, 60], [L, 68], [R, 68]],
  };
  const cache = new Map();

  function node(tag, attrs, ...children) {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
    for (const c of children) if (c) n.append(c);
    return n;
  }

  function text(x, y, size, fill, value, extra) {
    const t = node("text", Object.assign({ x, y, "font-size": size, fill, "text-anchor": "middle",
      "font-family": "Georgia, 'DejaVu Serif', serif", "font-weight": 700 }, extra || {}));
    t.textContent = value;
    return t;
  }

  function shape(suit, x, y, size, fill) {
    const g = node("g", { transform: `translate(${x - size / 2} ${y - size / 2}) scale(${size / 10})`, fill });
    for (const [tag, attrs] of SHAPES[suit]) g.append(node(tag, attrs));
    return g;
  }

  // The corner index, top left and (turned) bottom right, as on printed cards: big enough to read
  // on a phone (two digits are narrowed to fit, not made smaller).
  function corners(svg, label, suit, fill) {
    for (const turned of [false, true]) {
      const g = node("g", turned ? { transform: "rotate(180 30 45)" } : {});
      g.append(text(9, 17, 18, fill, label, label.length > 1 ? { textLength: 15, lengthAdjust: "spacingAndGlyphs" } : {}));
      if (suit) g.append(shape(suit, 9, 25.5, 9, fill));
      svg.append(g);
    }
  }

  function frame(fill, title) {
    const svg = node("svg", { viewBox: "0 0 60 90", class: "card-svg", role: "img", "aria-label": title });
    svg.append(node("title", {}, document.createTextNode(title)));
    svg.append(node("rect", { x: .5, y: .5, width: 59, height: 89, rx: 5, fill, stroke: "#8b8f99", "stroke-width": 1 }));
    return svg;
  }

  function suitCard(code) {
    const suit = code[0], rank = code.slice(1);
    const fill = suit === "H" || suit === "D" ? RED : BLACK;
    const svg = frame("#fff", (RANKS[rank] || rank) + " of " + NAMES[suit]);
    corners(svg, rank, suit, fill);
    const pips = rank === "A" ? 1 : +rank;
    if (pips >= 1 && pips <= 10) {
      const size = rank === "A" ? 20 : 9;
      for (const [x, y] of PIPS[pips]) svg.append(shape(suit, x, y, size, fill));
      return svg;
    }
    // A court: a framed panel with its letter, its suit and (King, Queen) a crown.
    const tint = fill === RED ? "#fbe3e0" : "#e3e7ef";
    svg.append(node("rect", { x: 17, y: 14, width: 26, height: 62, rx: 3, fill: tint, stroke: fill, "stroke-width": 1 }));
    if (rank === "K" || rank === "Q") {
      svg.append(node("path", { d: rank === "K" ? "M22 33 22 24 26 29 30 22 34 29 38 24 38 33Z" : "M23 33 24.5 26 30 30 35.5 26 37 33Z",
        fill: GOLD, stroke: "#7a5a10", "stroke-width": .6 }));
    } else {
      svg.append(shape(suit, 30, 28, 10, fill));
    }
    svg.append(text(30, 58, 20, fill, rank));
    svg.append(shape(suit, 30, 68, 8, fill));
    return svg;
  }

  function tarok(number) {
    const svg = frame("#fdf6e0", number === 1 ? "Tarok 1 (Pagat)" : number === 21 ? "Tarok 21 (Mond)" : "Tarok " + number);
    corners(svg, String(number), null, BLACK);
    svg.append(node("rect", { x: 16, y: 22, width: 28, height: 46, rx: 3, fill: "#f3e3b0", stroke: GOLD, "stroke-width": 1 }));
    svg.append(node("path", { d: "M19 29H41M19 61H41", stroke: GOLD, "stroke-width": 1 }));
    svg.append(text(30, 53, 22, "#3d2a00", String(number), number >= 10 ? { textLength: 24, lengthAdjust: "spacingAndGlyphs" } : {}));
    return svg;
  }

  function fool() {
    const svg = frame("#efe8ff", "The Fool (Excuse)");
    corners(svg, "★", null, "#5a3fa0");
    svg.append(node("rect", { x: 16, y: 22, width: 28, height: 46, rx: 3, fill: "#ddd0fb", stroke: "#5a3fa0", "stroke-width": 1 }));
    svg.append(node("path", { d: "M30 27 33.5 37.5H44.5L35.5 44 39 54.5 30 48 21 54.5 24.5 44 15.5 37.5H26.5Z", fill: "#5a3fa0" }));
    return svg;
  }

  function make(code) {
    if (code === "EX") return fool();
    if (code[0] === "T") return tarok(+code.slice(1));
    if (SHAPES[code[0]]) return suitCard(code);
    throw new Error("unknown card " + code);
  }

  function face(code) {
    if (!cache.has(code)) cache.set(code, make(code));
    return cache.get(code).cloneNode(true);
  }

  function back() {
    const svg = node("svg", { viewBox: "0 0 60 90", class: "card-svg", role: "img", "aria-label": "a card face down" });
    svg.append(node("rect", { x: .5, y: .5, width: 59, height: 89, rx: 5, fill: "#2f4f86", stroke: "#1f355c" }));
    svg.append(node("rect", { x: 5, y: 5, width: 50, height: 80, rx: 3, fill: "none", stroke: "#9fb6e0", "stroke-width": 1.2 }));
    svg.append(node("path", { d: "M30 14 46 45 30 76 14 45Z", fill: "none", stroke: "#9fb6e0", "stroke-width": 1.2 }));
    return svg;
  }

  // Every card's code, in the canonical order (G-CODE-4).
  const ALL = [];
  for (const s of ["S", "H", "D", "C"]) for (const r of ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "C", "Q", "K"]) ALL.push(s + r);
  for (let t = 1; t <= 21; t++) ALL.push("T" + t);
  ALL.push("EX");

  // A card's short name in text: ♠K, ♥10, T21, EX.
  function label(code) {
    const symbols = { S: "♠", H: "♥", D: "♦", C: "♣" };
    return symbols[code[0]] && code[0] !== "T" ? symbols[code[0]] + code.slice(1) : code;
  }

  return { face, back, label, ALL };
})();
