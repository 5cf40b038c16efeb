// Bulk FiveM queries with gamedig in its fastest form: a pool of CONCURRENCY workers,
// each taking the next target and awaiting GameDig.query (type protocol-fivem: UDP
// getinfo, then /info.json and /players.json), all under one Promise.all.
//
// Usage: node gamedig_bulk.mjs GAMEDIG_DIR LIST CONCURRENCY TIMEOUT_MS
// LIST has one HOST:PORT a line. Prints `ok HOST:PORT PLAYERS` or `err HOST:PORT WHY`
// per target as it finishes, then a summary line on standard error. Used by
// `ogp-load fivem` for the side-by-side benchmark (crates/ogp-load/README.md).

import * as fs from 'node:fs'
import * as path from 'node:path'
import * as process from 'node:process'
import { pathToFileURL } from 'node:url'

const [dir, list, concurrency, timeout] = process.argv.slice(2)
const { GameDig } = await import(pathToFileURL(path.join(dir, 'lib/index.js')).href)
const targets = fs.readFileSync(list, 'utf8').split('\n').map(l => l.trim()).filter(Boolean)
const out = []
let next = 0
let answered = 0
const t0 = process.hrtime.bigint()

async function worker () {
  while (next < targets.length) {
    const target = targets[next++]
    const i = target.lastIndexOf(':')
    try {
      const s = await GameDig.query({
        type: 'protocol-fivem',
        host: target.slice(0, i),
        port: Number(target.slice(i + 1)),
        givenPortOnly: true,
        socketTimeout: Number(timeout),
        attemptTimeout: 4 * Number(timeout),
        maxRetries: 1
      })
      answered++
      out.push(`ok ${target} ${s.players.length}`)
    } catch (e) {
      out.push(`err ${target} ${String((e && e.message) || e).split('\n')[0]}`)
    }
    if (out.length >= 256) process.stdout.write(out.splice(0).join('\n') + '\n')
  }
}

await Promise.all(Array.from({ length: Number(concurrency) }, worker))
if (out.length) process.stdout.write(out.join('\n') + '\n')
const took = Number(process.hrtime.bigint() - t0) / 1e9
process.stderr.write(`gamedig: ${answered} of ${targets.length} read in ${took.toFixed(2)} s (concurrency ${concurrency})\n`)
