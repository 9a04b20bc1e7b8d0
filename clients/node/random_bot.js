#!/usr/bin/env node
'use strict';
/**
 * A bot that plays a uniformly random legal action.
 *
 *     node random_bot.js [--address HOST:PORT] [--token TOKEN] [--name NAME]
 *
 * The generator is seeded from the environment variable ARENA_BOT_SEED when it is set
 * (reproducible games), else from Math.random; a persistent process (ARENA_MATCHES=stdin) seeds it
 * again before each match.
 */
const { main } = require('./sdk');

/** mulberry32 seeded from a string: small, fast, and the same sequence on every platform. */
function seededRandom(text) {
  let state = 2166136261;
  for (const ch of text) state = Math.imul(state ^ ch.codePointAt(0), 16777619) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let random = null;

/** The generator again from ARENA_BOT_SEED: at start, and before each match of a persistent process. */
function reseed() {
  random = process.env.ARENA_BOT_SEED ? seededRandom(process.env.ARENA_BOT_SEED) : Math.random;
}
reseed();

function decide(request) {
  const legal = request.legal_actions;
  if (legal.length === 0) throw new Error(`request ${request.request_id} offers no legal action`);
  return legal[Math.floor(random() * legal.length)];
}

module.exports = { decide, reseed, seededRandom };

if (require.main === module) main(decide, { name: 'random-node', newMatch: reseed });
