'use strict'
// Query game servers from Node with the ogp Rust client.
//
//   const ogp = require('ogp')
//   const r = await ogp.query('127.0.0.1:27015')
//   console.log(r.status.host_name, r.ping_ms)
//
// Every function is the `ogp` command's: `query` is `ogp query`, `scan` is `ogp scan`,
// `games` is `ogp games`, `decode` is `ogp decode`, `listServers` is `ogp list --json`, with the same option names (in
// camelCase), defaults and meanings; times in milliseconds, as the CLI's --timeout.
// Results are the JSON objects of docs/json.md. The protocol work is all in Rust
// (ogp.node, crates/ogp-node/src/lib.rs); this file only converts.

const native = require(process.env.OGP_NODE_ADDON || './ogp.node')

/** A query that failed: `kind` is docs/json.md's `error`, `fault` whose fault
 * (`network`, `server`, `local`), `message` the line `ogp query` prints, `result` the
 * failure result (`ogp query --json`'s object). */
class QueryError extends Error {
  constructor (result) {
    super(`${result.target}: ${result.message}`)
    this.name = new.target.name
    this.result = result
    this.kind = result.error || 'error'
    this.fault = result.fault || 'local'
    this.target = result.target || ''
    this.detail = result.message || ''
  }
}
/** No usable answer before the deadline. */
class TimeoutError extends QueryError {}
/** Nothing listens on that port (ICMP port unreachable, refused TCP). */
class RefusedError extends QueryError {}
/** The server answered with a refusal. */
class RejectedError extends QueryError {}
/** The answer did not decode. */
class MalformedError extends QueryError {}
/** The target is not host:port, or the host name did not resolve. */
class ResolveError extends QueryError {}
/** A local socket error. */
class SocketError extends QueryError {}
/** The options ask for something the protocol cannot do. */
class OptionsError extends QueryError {}
/** Datagrams given to `decode` that do not decode. */
class DecodeError extends Error {
  constructor (message) {
    super(message)
    this.name = 'DecodeError'
  }
}

/** A server list that could not be read: `kind` is the cause (`usage`, `resolve`,
 * `network`, `tls`, `http`, `timeout`, `malformed`), `message` the line `ogp list`
 * prints (a Steam key is never in it). */
class ListError extends Error {
  constructor (kind, message) {
    super(message)
    this.name = 'ListError'
    this.kind = kind
  }
}

const ERRORS = {
  timeout: TimeoutError,
  refused: RefusedError,
  rejected: RejectedError,
  malformed: MalformedError,
  resolve: ResolveError,
  socket: SocketError,
  options: OptionsError
}

/** The native layer's argument errors as TypeError (checked before anything is sent). */
function call (f) {
  try {
    return f()
  } catch (e) {
    throw argError(e)
  }
}

function argError (e) {
  if (e && e.code === 'InvalidArg') {
    const t = new TypeError(e.message)
    t.code = 'ERR_INVALID_ARG_VALUE'
    return t
  }
  return e
}

function answer (text) {
  const r = JSON.parse(text)
  if (!r.ok) throw new (ERRORS[r.error] || QueryError)(r)
  return r
}

/** `ogp query`: the server's answer, or a QueryError subclass by cause. */
async function query (address, options = {}) {
  let text
  try {
    text = await native.query(String(address), options)
  } catch (e) {
    throw argError(e)
  }
  return answer(text)
}

/** `ogp scan`: every target's result (answers and failures), as each completes, as an
 * async iterator. Leaving the loop early (break, throw) stops the scan at once. */
function scan (targets, options = {}) {
  if (typeof targets === 'string') targets = targets.split(/\r?\n/)
  const s = call(() => new native.Scan(Array.from(targets, String), options))
  const gen = (async function * () {
    try {
      for (;;) {
        const batch = await s.next() // the results ready now, as one JSON array
        if (batch === null) return
        yield * JSON.parse(batch)
      }
    } finally {
      s.close()
    }
  })()
  gen.close = () => s.close()
  gen.stats = () => JSON.parse(s.stats())
  return gen
}

/** `ogp games --json`: the catalogue's entries (those matching `filter`). */
function games (filter) {
  return JSON.parse(native.games(filter == null ? null : String(filter)))
}

function bytes (d) {
  if (typeof d === 'string') {
    const hex = d.replace(/^0x/i, '').replace(/[\s:-]/g, '')
    if (!/^([0-9a-f]{2})+$/i.test(hex)) throw new TypeError('decode: a string must be hex digits')
    return Buffer.from(hex, 'hex')
  }
  if (d instanceof Uint8Array) return Buffer.from(d.buffer, d.byteOffset, d.byteLength)
  if (d instanceof ArrayBuffer) return Buffer.from(d)
  throw new TypeError('decode: expected a Buffer, a Uint8Array, hex or an array of them')
}

/** `ogp decode`: one datagram (or a run of them, in order, fragments reassembled)
 * decoded as docs/decode.md's objects: `{ messages, notes }`. */
function decode (data, options = {}) {
  const list = Array.isArray(data) ? data.map(bytes) : [bytes(data)]
  let text
  try {
    text = native.decode(list, options.protocol ?? null, options.charset ?? null)
  } catch (e) {
    if (e && e.code === 'GenericFailure') throw new DecodeError(e.message)
    throw argError(e)
  }
  return JSON.parse(text)
}

/** `ogp list --json`: the servers of a master server or a list on the web, as the
 * CLI's objects (`addr`, `protocols`, and `name`, `map`, `players`… where the list has
 * them); a ListError by cause. */
async function listServers (master, options = {}) {
  let text
  try {
    text = await native.listServers(String(master), options)
  } catch (e) {
    throw argError(e)
  }
  const r = JSON.parse(text)
  if (!r.ok) throw new ListError(r.kind, r.message)
  return r.servers
}

module.exports = {
  query,
  scan,
  games,
  decode,
  listServers,
  QueryError,
  TimeoutError,
  RefusedError,
  RejectedError,
  MalformedError,
  ResolveError,
  SocketError,
  OptionsError,
  DecodeError,
  ListError,
  version: require('./package.json').version,
  _native: native
}

// The gamedig-compatible entry (gamedig.js), after the exports it uses.
module.exports.GameDig = require('./gamedig.js').GameDig
