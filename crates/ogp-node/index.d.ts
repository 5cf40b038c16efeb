// Types of the `ogp` Node package (index.js, gamedig.js). Results are docs/json.md's
// objects; times are milliseconds.

/** Where a failure lies (docs/json.md). */
export type Fault = 'network' | 'server' | 'local'

/** A failure's cause (docs/json.md's `error`). */
export type ErrorKind =
  | 'timeout'
  | 'refused'
  | 'rejected'
  | 'malformed'
  | 'resolve'
  | 'socket'
  | 'options'

export interface MapInfo {
  name?: string
  file_name?: string
  file_size?: number
  version?: string
  url?: string
  [key: string]: unknown
}

export interface Player {
  name?: string
  score?: number
  ping?: number
  team?: number
  duration?: number
  bot?: boolean
  slot?: number
  extra?: Record<string, unknown>
  [key: string]: unknown
}

export interface Team {
  name?: string
  score?: number
  extra?: Record<string, unknown>
  [key: string]: unknown
}

/** A server's status: the state-file schema (docs/state-file.md). */
export interface Status {
  game_name?: string
  game_version?: string
  host_name?: string
  host_name_raw?: string
  connect_port?: number
  password?: boolean
  map?: MapInfo
  next_map?: MapInfo
  game_type?: string
  player_count?: number
  slot_max?: number
  reserved_slots?: number
  bot_count?: number
  players?: Player[]
  teams?: Team[]
  rules?: Record<string, string>
  [key: string]: unknown
}

/** One result of docs/json.md: an answer (`ok: true`) or a failure. */
export interface Result {
  schema: number
  target: string
  line?: number
  protocol?: string
  ok: boolean
  addr?: string
  ping_ms?: number
  datagrams?: number
  bytes?: number
  warnings?: string[]
  game_id?: string
  status?: Status
  error?: ErrorKind
  fault?: Fault
  message?: string
  [key: string]: unknown
}

/** An answer: what `query` resolves to. */
export interface Answer extends Result {
  ok: true
  status: Status
  ping_ms: number
}

export interface QueryOptions {
  /** A protocol name (`ogp games` and docs list them), or `auto` (the default). */
  protocol?: string
  /** A game id of the catalogue (`games()`): picks the protocol and the query port. */
  game?: string
  /** Milliseconds per attempt (1000). */
  timeout?: number
  /** Attempts after the first (2). */
  retries?: number
  /** `auto` or a charset name. */
  charset?: string
  /** Try the well-known query ports (protocol auto or game only). */
  tryQueryPorts?: boolean
}

export interface ScanOptions {
  /** The protocol of lines that name none (auto). */
  protocol?: string
  /** Milliseconds per attempt (500). */
  timeout?: number
  /** Attempts after the first (3). */
  retries?: number
  /** Milliseconds a target may take in all (6000). */
  deadline?: number
  /** Targets started per second (5000). */
  rate?: number
  /** Targets at once (2048). */
  maxInFlight?: number
  /** Host names resolved at once (32). */
  resolvers?: number
  /** Shared UDP sockets, 1-64 (2). */
  sockets?: number
  tryQueryPorts?: boolean
  charset?: string
}

export interface ScanStats {
  targets: number
  answered: number
  timed_out: number
  failed: number
  in_flight: number
  sent: number
  received: number
  connections: number
}

/** A running scan: an async iterator of every target's result. */
export interface Scan extends AsyncGenerator<Result, void, undefined> {
  /** Stops the scan now (its sockets close). */
  close(): void
  stats(): ScanStats
}

/** An entry of the games catalogue (`ogp games --json`). */
export interface Game {
  id: string
  aliases: string[]
  name: string
  protocol: string
  dialect: string | null
  port: number
  query: string
  query_port: number
  notes: string | null
  [key: string]: unknown
}

/** One decoded message (docs/decode.md). */
export interface DecodedMessage {
  protocol: string
  kind: string
  status?: Status
  warnings?: string[]
  [key: string]: unknown
}

export interface Decoded {
  messages: DecodedMessage[]
  /** `note: …` and `warning: …` lines (a protocol guess, a duplicate fragment). */
  notes: string[]
}

export type Bytes = Uint8Array | ArrayBuffer | string

/** `ogp query`: the server's answer; rejects with a QueryError subclass by cause, or a
 * TypeError for a bad argument (before anything is sent). */
export function query(address: string, options?: QueryOptions): Promise<Answer>

/** `ogp scan`: targets are list lines (`HOST:PORT`, `PROTOCOL HOST:PORT`,
 * `game:ID HOST[:PORT]`); throws a TypeError for a bad line before anything is sent. */
export function scan(targets: Iterable<string> | string, options?: ScanOptions): Scan

/** `ogp games --json`: the entries whose id, alias, name or protocol contains `filter`. */
export function games(filter?: string): Game[]

/** `ogp decode`: a datagram (or a run of them, in order) decoded; throws DecodeError. */
export function decode(
  data: Bytes | Bytes[],
  options?: { protocol?: string; charset?: string }
): Decoded

/** A server as a list gives it (`ogp list --json`'s object). */
export interface Listed {
  addr: string
  protocols: string[]
  name?: string
  map?: string
  game?: string
  players?: number
  max_players?: number
  password?: boolean
  location?: string
  [key: string]: unknown
}

export interface ListOptions {
  /** The CLI's flag by name: `valve` (the default for HOST:PORT), `dp`, `gs1`, `cube2`,
   * `qw`, `tw`, `tw7`, `api` (the default for an http(s):// URL), `ddnet`, `minetest`,
   * `openmp`, `steam`. */
  kind?: string
  filter?: string
  limit?: number
  /** Milliseconds for the whole run (60000). */
  timeout?: number
  /** Milliseconds a page (2000). */
  pageTimeout?: number
  /** Valve's region byte (255: all). */
  region?: number
  /** `dp`, `gs1`: the game. */
  game?: string
  /** `dp`: the protocol number. */
  protocol?: string
  /** `gs1`: the game's key. */
  gs1Key?: string
  /** `steam`: a file holding the Web API key (else the OGP_STEAM_KEY environment variable). */
  steamKeyFile?: string
  /** Take any HTTPS certificate (your own self-signed servers only). */
  insecure?: boolean
}

/** `ogp list --json`: a master's or a web list's servers; rejects with a ListError. */
export function listServers(master: string, options?: ListOptions): Promise<Listed[]>

export class ListError extends Error {
  readonly kind: 'usage' | 'resolve' | 'network' | 'tls' | 'http' | 'timeout' | 'malformed' | 'output'
}

export class QueryError extends Error {
  readonly result: Result
  readonly kind: ErrorKind | 'error'
  readonly fault: Fault
  readonly target: string
  /** The line `ogp query` prints. */
  readonly detail: string
}
export class TimeoutError extends QueryError {}
export class RefusedError extends QueryError {}
export class RejectedError extends QueryError {}
export class MalformedError extends QueryError {}
export class ResolveError extends QueryError {}
export class SocketError extends QueryError {}
export class OptionsError extends QueryError {}
export class DecodeError extends Error {}

export const version: string

/** A player as gamedig shows one. */
export interface GamedigPlayer {
  name: string
  raw: Record<string, unknown>
}

/** gamedig's result shape (docs/node.md lists the fields that differ). */
export interface GamedigResult {
  name: string
  map: string
  password: boolean
  raw: Status
  version: string
  maxplayers: number
  numplayers: number
  players: GamedigPlayer[]
  bots: GamedigPlayer[]
  queryPort: number
  connect: string
  ping: number
  /** ogp's own result. */
  ogp: Answer
}

export interface GamedigOptions {
  /** A gamedig game id (or `protocol-NAME`). */
  type: string
  host: string
  /** The game port, as in gamedig. */
  port?: number
  /** Milliseconds per attempt (2000). */
  socketTimeout?: number
  /** Attempts after the first (1). */
  maxRetries?: number
  /** Query `port` itself, not the game's query port. */
  givenPortOnly?: boolean
  [key: string]: unknown
}

export const GameDig: {
  query(options: GamedigOptions): Promise<GamedigResult>
}
