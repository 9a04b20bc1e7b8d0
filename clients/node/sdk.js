'use strict';
/**
 * The bot side of the Grosstarock Arena protocol for Node.js: one stream per seat, a `decide`
 * hook per decision.
 *
 *     const { main } = require('./sdk');
 *     main((request) => request.legal_actions[0], { name: 'first-legal' });
 *
 * The protocol is read at run time from proto/arena/v1/arena.proto in the arena repository
 * (or the file named by ARENA_PROTO), so the bot never carries a copy that could drift.
 *
 * Messages are plain objects with the field names of the .proto (`request_id`,
 * `legal_actions`, ...). Every field is present (empty strings, 0, [] when unset), a 64-bit
 * integer is a decimal string (request ids can exceed 2**53), and a `oneof` names its case in
 * a `kind` property (`message.kind === 'request'`).
 */

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTOCOL_VERSION = 1;
const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const PROTO_FILE = 'arena/v1/arena.proto';
/** How many times `decide` is asked about one request after rejections before the SDK falls
 * back to the first legal action it has not tried yet. */
const MAX_TRIES_PER_REQUEST = 3;
/** A client of its own connections: grpc-js otherwise hands a new client the connection of any live
 * one to the same address, and the SDK dials again precisely to get a new one. */
const OWN_CONNECTION = { 'grpc.use_local_subchannel_pool': 1 };
/** A broken stream worth dialling again; every other status is final (a bad token, a protocol
 * error, a match that is over). Not ABORTED: the server ends a stream so when another connection
 * with the same token took the seat, and dialling again would take it back (docs/PROTOCOL.md). */
const RETRYABLE = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.CANCELLED,
  grpc.status.UNKNOWN,
  grpc.status.INTERNAL,
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.RESOURCE_EXHAUSTED,
]);

class BotError extends Error {
  constructor(message, code) {
    super(message);
    this.name = 'BotError';
    this.code = code;
  }
}

let cachedProtocol = null;

/** The loaded `grosstarock.arena.v1` package (its services and message types). */
function loadProtocol(protoFile = process.env.ARENA_PROTO) {
  if (cachedProtocol && !protoFile) return cachedProtocol;
  const file = protoFile ? path.resolve(protoFile) : path.join(PROTO_ROOT, PROTO_FILE);
  if (!fs.existsSync(file)) {
    throw new BotError(`protocol file ${file} not found (set ARENA_PROTO to arena/v1/arena.proto)`);
  }
  const definition = protoLoader.loadSync(file, {
    keepCase: true, // field names exactly as in the .proto
    longs: String, // uint64 request ids and int64 scores and pots as decimal strings: exact above 2**53
    enums: String,
    defaults: true, // unset fields read as '', 0, [] rather than undefined
    oneofs: true, // message.kind names the oneof case that is set
    includeDirs: protoFile ? [] : [PROTO_ROOT],
  });
  const protocol = grpc.loadPackageDefinition(definition).grosstarock.arena.v1;
  if (!protoFile) cachedProtocol = protocol;
  return protocol;
}

/** The text form of an action, e.g. `play EX S`. */
function actionText(action) {
  return [action.type, action.card, action.name, action.suit].filter(Boolean).join(' ');
}

const CARD_TYPES = new Set(['play', 'discard', 'call']);
const NAME_TYPES = new Set(['declare', 'announce', 'bid']);

/** An action object from itself or its text form (`'play SK'`, `'declare cavallerie H'`). */
function makeAction(value) {
  if (value && typeof value === 'object') {
    return { type: value.type || '', card: value.card || '', suit: value.suit || '', name: value.name || '' };
  }
  if (typeof value !== 'string') {
    throw new TypeError(`decide must return an action or its text form, not ${typeof value}`);
  }
  const parts = value.trim().split(/\s+/).filter(Boolean);
  if (parts.length === 0) throw new Error('empty action text');
  const action = { type: parts.shift().toLowerCase(), card: '', suit: '', name: '' };
  if (CARD_TYPES.has(action.type) && parts.length) action.card = parts.shift().toUpperCase();
  else if (NAME_TYPES.has(action.type) && parts.length) action.name = parts.shift();
  if (parts.length) action.suit = parts.shift().toUpperCase();
  if (parts.length) throw new Error(`unexpected words ${JSON.stringify(parts)} in action ${JSON.stringify(value)}`);
  return action;
}

function sameAction(a, b) {
  return a.type === b.type && a.card === b.card && a.suit === b.suit && a.name === b.name;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Play one seat of one match; resolves with a result when the server sends MatchEnd.
 *
 * `bot` is a function `decide(request) -> action` (or a promise of one), or an object with a
 * `decide` method and optional hooks `onMatchStart(start)`, `onEvent(event)`,
 * `onRejected(rejected)`, `onMatchEnd(end)`. `decide` gets the whole DecisionRequest and returns
 * one of `request.legal_actions` (or the text form of an action).
 *
 * Options: `address` and `token` (default: the environment variables ARENA_ADDRESS and
 * ARENA_TOKEN, which `arena play` sets), `name`, `version`, `reconnectSeconds` (30).
 *
 * A stream that breaks before MatchEnd is dialled again with the same token, with backoff; the
 * server then sends MatchStart and the pending request again, and `decide` is asked afresh.
 * UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT and other final statuses reject the
 * promise with a BotError. Message fields and kinds the bot does not know are ignored.
 */
async function runBot(bot, options = {}) {
  const hooks = typeof bot === 'function' ? { decide: bot } : bot;
  if (!hooks || typeof hooks.decide !== 'function') {
    throw new TypeError('runBot needs a decide function or an object with a decide method');
  }
  const address = options.address || process.env.ARENA_ADDRESS || '';
  const token = options.token || process.env.ARENA_TOKEN || '';
  if (!address) throw new BotError('no server address: pass --address or set ARENA_ADDRESS');
  if (!token) throw new BotError('no seat token: pass --token or set ARENA_TOKEN');
  const protocol = loadProtocol(options.protoFile);
  const reconnectMs = (options.reconnectSeconds ?? 30) * 1000;
  const hello = {
    hello: {
      bot_name: options.name || hooks.name || 'bot',
      bot_version: options.version || hooks.version || '',
      protocol_version: PROTOCOL_VERSION,
    },
  };
  const session = {
    hooks,
    result: { scores: [], termination: '', replay: '', seat: -1, decisions: 0, rejections: 0, reconnects: 0 },
    pending: null,
    tried: [],
  };

  // The first redial goes at once (a pending decision's clock runs while the stream is down),
  // then 100 ms, doubling up to 5 s.
  let delay = 0;
  let brokenSince = null;
  for (;;) {
    const client = new protocol.BotService(address, grpc.credentials.createInsecure(), OWN_CONNECTION);
    let outcome;
    try {
      outcome = await playStream(client, session, token, hello);
    } finally {
      client.close();
    }
    if (outcome.ended) return session.result;
    const { code, details, progress } = outcome;
    const reason = `${code === undefined ? 'closed' : grpc.status[code] || code}: ${details}`;
    if (code !== undefined && !RETRYABLE.has(code)) throw new BotError(reason, code);
    const now = Date.now();
    if (progress || brokenSince === null) {
      brokenSince = now;
      delay = 0;
    }
    const left = brokenSince + reconnectMs - now;
    if (left <= 0) throw new BotError(`no stream to ${address} for ${reconnectMs / 1000} s (${reason})`, code);
    log(`stream broken (${reason}); reconnecting`);
    await sleep(Math.min(delay, left));
    delay = Math.min(Math.max(delay * 2, 100), 5000);
    session.result.reconnects += 1;
  }
}

function log(text) {
  if (process.env.ARENA_BOT_VERBOSE) process.stderr.write(`arena-bot: ${text}\n`);
}

/** One stream until MatchEnd: resolves `{ended: true}`, or `{code, details, progress}` when it breaks. */
function playStream(client, session, token, hello) {
  return new Promise((resolve) => {
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    const call = client.Play(metadata);
    let progress = false;
    let settled = false;
    let queue = Promise.resolve(); // messages are handled one at a time, in order
    const finish = (value) => {
      if (settled) return;
      settled = true;
      resolve(value);
    };

    const answer = async (request) => {
      let action = null;
      if (session.tried.length < MAX_TRIES_PER_REQUEST) {
        const chosen = makeAction(await session.hooks.decide(request));
        if (!session.tried.some((t) => sameAction(t, chosen))) action = chosen;
      }
      if (action === null) {
        const untried = request.legal_actions.find((l) => !session.tried.some((t) => sameAction(t, l)));
        if (!untried) return; // every legal action was rejected: wait for the clock
        action = makeAction(untried);
      }
      if (session.pending !== request || settled) return; // a newer request or a new stream came in the meantime
      session.tried.push(action);
      session.result.decisions += 1;
      call.write({ action: { request_id: request.request_id, action } });
    };

    const handle = async (message) => {
      progress = true;
      const h = session.hooks;
      switch (message.kind) {
        case 'match_start':
          session.result.seat = message.match_start.seat;
          if (h.onMatchStart) await h.onMatchStart(message.match_start);
          break;
        case 'request': {
          // Public events travel with the request. A new request, or the pending one sent again
          // after a reconnection: answer it afresh.
          const request = message.request;
          if (h.onEvent) for (const event of request.events) await h.onEvent(event);
          session.pending = request;
          session.tried = [];
          await answer(request);
          break;
        }
        case 'rejected':
          session.result.rejections += 1;
          log(`request ${message.rejected.request_id} rejected: ${message.rejected.reason}`);
          if (h.onRejected) await h.onRejected(message.rejected);
          if (session.pending && session.pending.request_id === message.rejected.request_id) {
            await answer(session.pending);
          }
          break;
        case 'events':
          if (h.onEvent) for (const event of message.events.events) await h.onEvent(event);
          break;
        case 'match_end': {
          const end = message.match_end;
          Object.assign(session.result, { scores: end.scores, termination: end.termination, replay: end.replay });
          if (h.onMatchEnd) await h.onMatchEnd(end);
          call.end();
          finish({ ended: true });
          break;
        }
        default: // a kind from a later version of the protocol
          break;
      }
    };

    call.on('data', (message) => {
      queue = queue.then(() => handle(message)).catch((error) => {
        call.cancel();
        finish({ code: undefined, details: String(error), progress, error });
      });
    });
    call.on('error', (error) => {
      queue.then(() => finish({ code: error.code, details: error.details || error.message, progress }));
    });
    call.on('end', () => {
      queue.then(() => finish({ code: undefined, details: 'the server closed the stream before MatchEnd', progress }));
    });
    call.write(hello);
  }).then((outcome) => {
    if (outcome.error) throw outcome.error; // an exception in decide or a hook ends the bot
    return outcome;
  });
}

/** Server addresses from an array, or from one string with commas. */
function splitAddresses(address) {
  const parts = Array.isArray(address) ? address : String(address || '').split(',');
  return parts.map((part) => String(part).trim()).filter(Boolean);
}

/**
 * A target that gRPC's `round_robin` balances over `addresses` (`ipv4:a:p,b:p` or `ipv6:...`) when
 * every one is a plain IP literal of one family; null otherwise (host names: the SDK rotates).
 */
function balancedTarget(addresses) {
  const net = require('node:net');
  const families = new Set();
  for (const address of addresses) {
    const cut = address.lastIndexOf(':');
    if (cut < 0 || !/^\d+$/.test(address.slice(cut + 1))) return null;
    const family = net.isIP(address.slice(0, cut).replace(/^\[|\]$/g, ''));
    if (!family) return null;
    families.add(family);
  }
  if (addresses.length < 2 || families.size !== 1) return null;
  return `${families.has(4) ? 'ipv4' : 'ipv6'}:${addresses.join(',')}`;
}

const LOBBY_BROKEN = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.CANCELLED,
  grpc.status.UNKNOWN,
  grpc.status.INTERNAL,
  grpc.status.DEADLINE_EXCEEDED,
]);

/**
 * The standing arena: join the lobby with a bot token and play every match the bot is seated at,
 * each with `runBot` on the server its `Seated.address` names (the table's host).
 *
 * Options: `address` (one `host:port`, or several servers of one arena as an array or with commas;
 * default ARENA_ADDRESS), `botToken` (default ARENA_BOT_TOKEN), `variants`, `maxMatches` (1),
 * `matches` (leave after that many seats), `name`, `version`, `reconnectSeconds` (60), and the
 * hooks `onSeated(seated)` and `onMatchEnd(seated, result, error)`.
 *
 * Several addresses are shuffled, and the first join goes to the first, so that bots spread over
 * the servers. When all are IP literals the later joins share one channel balanced by gRPC's own
 * `round_robin`: each goes to the next server that is up. Otherwise the SDK rotates itself: after
 * a broken lobby stream it joins the next address. UNAVAILABLE (a server down or draining) and
 * other broken streams are joined again
 * with backoff for up to `reconnectSeconds`; RESOURCE_EXHAUSTED and a pause wait `retry-after-ms`;
 * other statuses (a bad token or variant) reject with a BotError. Resolves with
 * `{botName, matches, failures, seated}` once the lobby is left and the matches in flight are over.
 */
async function runLobby(bot, options = {}) {
  const addresses = splitAddresses(options.address || process.env.ARENA_ADDRESS);
  const token = options.botToken || process.env.ARENA_BOT_TOKEN || '';
  if (!addresses.length) throw new BotError('no server address: pass --address or set ARENA_ADDRESS');
  if (!token) throw new BotError('no bot token: pass botToken or set ARENA_BOT_TOKEN');
  for (let i = addresses.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [addresses[i], addresses[j]] = [addresses[j], addresses[i]];
  }
  const protocol = loadProtocol(options.protoFile);
  const balanced = balancedTarget(addresses);
  const serviceConfig = JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] });
  let shared = balanced
    ? new protocol.LobbyService(balanced, grpc.credentials.createInsecure(), { 'grpc.service_config': serviceConfig, ...OWN_CONNECTION })
    : null;
  let current = 0;
  let joins = 0;
  const request = {
    variants: options.variants || [],
    max_matches: options.maxMatches || 1,
    bot_version: options.version || '',
    protocol_version: PROTOCOL_VERSION,
  };
  const out = { botName: '', matches: [], failures: [], seated: [] };
  const plays = new Set();
  const reconnectMs = (options.reconnectSeconds ?? 60) * 1000;
  let stopping = false;
  let delay = 200;
  let brokenSince = null;
  try {
    while (!stopping) {
      // The first join goes to the first address of the shuffled list: round_robin would send it to
      // whichever server it reached first, the same one for most bots that start together.
      const client = shared && joins > 0
        ? shared
        : new protocol.LobbyService(addresses[current], grpc.credentials.createInsecure(), OWN_CONNECTION);
      joins += 1;
      const ended = await new Promise((resolve) => {
        const metadata = new grpc.Metadata();
        metadata.set('authorization', `Bearer ${token}`);
        const call = client.Join(request, metadata);
        let welcomed = false;
        call.on('data', (message) => {
          if (message.kind === 'welcome') {
            welcomed = true;
            out.botName = message.welcome.bot_name;
          } else if (message.kind === 'seated') {
            welcomed = true;
            const seated = message.seated;
            out.seated.push(seated);
            if (options.onSeated) options.onSeated(seated);
            const play = runBot(bot, {
              ...options,
              address: seated.address || addresses[current],
              token: seated.seat_token,
              name: options.name || out.botName || 'bot',
              reconnectSeconds: 30,
            }).then(
              (result) => {
                out.matches.push(result);
                if (options.onMatchEnd) options.onMatchEnd(seated, result, null);
              },
              (error) => {
                out.failures.push([seated, String(error.message || error)]);
                if (options.onMatchEnd) options.onMatchEnd(seated, null, error);
              },
            );
            plays.add(play);
            play.finally(() => plays.delete(play));
            if (options.matches && out.seated.length >= options.matches) {
              stopping = true;
              call.cancel();
            }
          }
        });
        call.on('error', (error) => {
          const retry = error.metadata && error.metadata.get('retry-after-ms')[0];
          resolve({ code: error.code, details: error.details, welcomed, retryMs: retry ? Number(retry) : null });
        });
        call.on('end', () => resolve({ code: grpc.status.OK, details: 'closed by the server', welcomed, retryMs: null }));
      });
      if (client !== shared) client.close();
      if (stopping) break;
      const { code, details } = ended;
      if (ended.welcomed) brokenSince = null;
      if (code === grpc.status.RESOURCE_EXHAUSTED || (code === grpc.status.FAILED_PRECONDITION && ended.retryMs !== null)) {
        await sleep(ended.retryMs ?? delay);
        continue;
      }
      if (code !== grpc.status.OK && !LOBBY_BROKEN.has(code)) {
        throw new BotError(`lobby: ${grpc.status[code] || code}: ${details}`, code);
      }
      if (addresses.length > 1) current = (current + 1) % addresses.length; // that server may be down
      const now = Date.now();
      if (brokenSince === null) brokenSince = now;
      if (now - brokenSince > reconnectMs) {
        throw new BotError(`no lobby stream to ${addresses.join(',')} for ${reconnectMs / 1000} s (${details})`, code);
      }
      log(`lobby stream broken (${grpc.status[code] || code}: ${details}); joining again`);
      await sleep(delay * (0.5 + Math.random() / 2));
      delay = Math.min(delay * 2, 5000);
    }
  } finally {
    await Promise.all([...plays]);
    if (shared) shared.close();
    shared = null;
  }
  return out;
}

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 1) {
    const match = /^--(address|token|name|reconnect-seconds)(?:=(.*))?$/.exec(argv[i]);
    if (!match) throw new BotError(`unknown argument ${argv[i]} (expected --address, --token, --name, --reconnect-seconds)`);
    const value = match[2] !== undefined ? match[2] : argv[++i];
    if (value === undefined) throw new BotError(`${argv[i - 1]} needs a value`);
    out[match[1]] = value;
  }
  return out;
}

/**
 * A ladder's persistent process: one match per line of `input` (a readable stream, standard input
 * by default), each line a JSON object of that match's environment (ARENA_ADDRESS, ARENA_TOKEN,
 * ARENA_SEAT, ARENA_BOT_SEED, ...). The line is copied into process.env, `options.newMatch` is
 * called (a bot with state starts afresh there), and the match is played with `runBot`. Resolves
 * with the results when the input ends.
 */
async function playSequence(bot, options = {}, input = process.stdin) {
  const readline = require('node:readline');
  const results = [];
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let update;
    try {
      update = JSON.parse(line);
    } catch (error) {
      throw new BotError(`a match line that is not JSON: ${error.message}`);
    }
    if (typeof update !== 'object' || update === null || Array.isArray(update)
        || !Object.values(update).every((v) => typeof v === 'string')) {
      throw new BotError('a match line must be a JSON object of strings');
    }
    Object.assign(process.env, update);
    if (options.newMatch) await options.newMatch();
    const result = await runBot(bot, {
      ...options,
      address: process.env.ARENA_ADDRESS,
      token: process.env.ARENA_TOKEN,
      name: process.env.ARENA_BOT_NAME || options.name,
    });
    results.push(result);
    process.stderr.write(`${options.name || 'bot'}: ${result.termination || 'over'}; seat ${result.seat}; scores ${JSON.stringify(result.scores)}\n`);
  }
  return results;
}

/**
 * Command-line entry of a bot: `--address`, `--token`, `--name`, `--reconnect-seconds` (else
 * ARENA_ADDRESS, ARENA_TOKEN); plays the match, prints the final scores on stderr. With
 * ARENA_MATCHES=stdin, plays one match per line of standard input instead (`playSequence`, calling
 * `options.newMatch` before each). Exits with status 2 on a BotError, 1 when decide throws.
 */
function main(bot, options = {}) {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const settings = {
    ...options,
    address: args.address || options.address,
    token: args.token || options.token,
    name: args.name || options.name,
  };
  if (args['reconnect-seconds'] !== undefined) settings.reconnectSeconds = Number(args['reconnect-seconds']);
  const name = settings.name || 'bot';
  if (process.env.ARENA_MATCHES === 'stdin') {
    return playSequence(bot, settings).catch((error) => {
      process.stderr.write(`${name}: ${error.stack || error}\n`);
      process.exitCode = error instanceof BotError ? 2 : 1;
    });
  }
  return runBot(bot, settings).then(
    (result) => {
      process.stderr.write(`${name}: ${result.termination || 'over'}; seat ${result.seat}; scores ${JSON.stringify(result.scores)}\n`);
      return result;
    },
    (error) => {
      process.stderr.write(`${name}: ${error.stack || error}\n`);
      process.exitCode = error instanceof BotError ? 2 : 1;
    },
  );
}

module.exports = {
  BotError,
  PROTOCOL_VERSION,
  actionText,
  balancedTarget,
  loadProtocol,
  main,
  makeAction,
  playSequence,
  runBot,
  runLobby,
  splitAddresses,
};
