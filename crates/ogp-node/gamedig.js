'use strict'
// A gamedig-compatible entry: `GameDig.query({ type, host, port, ... })` with gamedig's
// game ids (the catalogue's ids and aliases include them: `ogp games`) and gamedig's
// result shape, so that a gamedig user changes one import:
//
//   const { GameDig } = require('ogp')   // was: import { GameDig } from 'gamedig'
//
// The query is ogp's (the `game` option of `query`); this file only reshapes its result.
// docs/node.md lists the fields that differ from gamedig's.

const ogp = require('./index.js')

/** gamedig's bot split when the server does not flag bots: Quake-family servers list
 * bots with ping 0; A2S counts them (bot_count) and gamedig takes the players connected
 * longest as the bots. */
function splitBots (status, protocol) {
  const all = status.players || []
  if (all.some(p => typeof p.bot === 'boolean')) {
    return [all.filter(p => !p.bot), all.filter(p => p.bot)]
  }
  if (/^(quake[23]|quakeworld|hexenworld)$/.test(protocol) && all.some(p => 'ping' in p)) {
    return [all.filter(p => p.ping !== 0), all.filter(p => p.ping === 0)]
  }
  const n = status.bot_count || 0
  if (n === 0) return [all, []]
  const longest = all
    .map((p, i) => ({ i, t: p.duration === undefined || p.duration < 0 ? Infinity : p.duration }))
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .slice(-n)
  const bot = new Set(longest.map(o => o.i))
  return [all.filter((_, i) => !bot.has(i)), all.filter((_, i) => bot.has(i))]
}

function player (p) {
  const { name, ...raw } = p
  return { name: name || '', raw }
}

/** ogp's result in gamedig's shape. */
function toGamedig (r, host, queryPort) {
  const s = r.status || {}
  const [players, bots] = splitBots(s, r.protocol)
  const port = s.connect_port || queryPort
  return {
    name: s.host_name || '',
    map: (s.map && s.map.name) || '',
    password: Boolean(s.password),
    raw: s,
    version: s.game_version || '',
    maxplayers: (s.slot_max || 0) + (s.reserved_slots || 0),
    numplayers: s.player_count ?? (s.players ? s.players.length : 0),
    players: players.map(player),
    bots: bots.map(player),
    queryPort,
    connect: `${host}:${port}`,
    ping: Math.round(r.ping_ms || 0),
    ogp: r
  }
}

const GameDig = {
  /** gamedig's `GameDig.query(options)`: `type` (a gamedig game id), `host`, `port` (the
   * game port, as in gamedig), `socketTimeout` (ms per attempt, 2000), `maxRetries` (1),
   * `givenPortOnly`. Rejects with ogp's QueryError subclasses (Errors). */
  async query (options) {
    if (!options || typeof options.type !== 'string') throw new TypeError('GameDig.query: no type')
    if (!options.host) throw new TypeError('GameDig.query: no host')
    const host = String(options.host)
    const address = options.port ? `${host}:${options.port}` : host
    const game = options.type.replace(/^protocol-/, '')
    const opts = {
      timeout: options.socketTimeout ?? 2000,
      retries: options.maxRetries ?? 1
    }
    let r
    if (options.type.startsWith('protocol-')) {
      r = await ogp.query(address, { ...opts, protocol: game === 'valve' ? 'a2s' : game })
    } else if (options.givenPortOnly && options.port) {
      const entry = ogp.games(game).find(g => g.id === game || (g.aliases || []).includes(game))
      r = await ogp.query(address, { ...opts, protocol: entry ? entry.protocol : game })
    } else {
      r = await ogp.query(address, { ...opts, game })
    }
    const queryPort = Number((r.addr || r.target).split(':').pop())
    return toGamedig(r, host, queryPort)
  }
}

module.exports = { GameDig, toGamedig }
