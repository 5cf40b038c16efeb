// Compiled by `tsc --noEmit --strict` (tests/node.rs): the package's types as a user's
// code meets them. Never run.
import * as ogp from 'ogp'
import { GameDig, ListError, QueryError, TimeoutError } from 'ogp'

async function main (): Promise<void> {
  const r: ogp.Answer = await ogp.query('127.0.0.1:27015', { protocol: 'a2s', timeout: 500 })
  const name: string | undefined = r.status.host_name
  const first: string | undefined = r.status.players?.[0]?.name
  const ms: number = r.ping_ms
  const s: ogp.Scan = ogp.scan(['a2s 127.0.0.1:27015'], { timeout: 500, maxInFlight: 10 })
  for await (const x of s) {
    const ok: boolean = x.ok
    if (!ok) {
      const kind: ogp.ErrorKind | undefined = x.error
      void kind
    }
  }
  s.close()
  const st: ogp.ScanStats = s.stats()
  const games: ogp.Game[] = ogp.games('bf2')
  const port: number = games[0].query_port
  const d: ogp.Decoded = ogp.decode(new Uint8Array([0xff]), { protocol: 'a2s' })
  const kind: string = d.messages[0].kind
  try {
    await ogp.query('127.0.0.1:1')
  } catch (e) {
    if (e instanceof TimeoutError) {
      const fault: ogp.Fault = e.fault
      const result: ogp.Result = e.result
      void fault; void result
    } else if (e instanceof QueryError) {
      const detail: string = e.detail
      void detail
    }
  }
  const g: ogp.GamedigResult = await GameDig.query({ type: 'csgo', host: '127.0.0.1', port: 27015 })
  const n: number = g.numplayers + g.maxplayers + g.bots.length
  const pw: boolean = g.password
  const pname: string = g.players[0].name
  try {
    const listed: ogp.Listed[] = await ogp.listServers('https://servers.minetest.net/list', { kind: 'minetest', limit: 10, pageTimeout: 2000 })
    const addr: string = listed[0].addr
    void addr
  } catch (e) {
    if (e instanceof ListError) {
      const cause: string = e.kind
      void cause
    }
  }
  void [name, first, ms, st, port, kind, n, pw, pname]
}
void main
