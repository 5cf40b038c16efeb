#!/usr/bin/env node
'use strict'
// 10,000 loopback A2S servers read from Node: `ogp.scan` against gamedig (`GameDig.query`
// under `Promise.all`, at each concurrency given), side by side; the Node twin of
// crates/ogp-py/bench/a2s_10k.py.
//
//   node crates/ogp-node/bench/a2s_10k.js --ogp-load target/release/ogp-load \
//     --gamedig target/interop/npm/node_modules/gamedig/lib/index.js [--targets 10000]
//
// The package is `require('ogp')` (`npm install ./crates/ogp-node` after the release
// build of docs/node.md), or the directory given with --ogp (crates/ogp-node, with its
// ogp.node copied in).
//
// The servers: `ogp-load scan-serve --mix a2s` (crates/ogp-load/README.md): real
// `ogp_net::responder`s on 127.81.0.1 ports 10000 and up, challenges required, one child
// process. Every client asks each server what `ogp scan` asks an A2S server: INFO, PLAYER
// and RULES (gamedig with requestRules); a target counts when all three came back. Each
// run is a child process of its own: wall time from the parent, CPU (user + system) and
// peak RSS from the child's process.resourceUsage(), start-up and imports included.

const { spawn, spawnSync } = require('node:child_process')
const readline = require('node:readline')

const IP = '127.81.0.1'
const PACKAGE = ['ogp']
const FIRST_PORT = 10000

function targets (n) {
  const skip = new Set((process.env.BENCH_SKIP || '').split(',').filter(Boolean).map(Number))
  const out = []
  for (let i = 0; i < n; i++) if (!skip.has(i)) out.push([IP, FIRST_PORT + i])
  return out
}

async function runOgp (addrs, concurrency) {
  const ogp = require(process.env.BENCH_OGP || 'ogp')
  let ok = 0
  for await (const r of ogp.scan(addrs.map(([h, p]) => `a2s ${h}:${p}`), { maxInFlight: concurrency, rate: 1000000 })) {
    if (r.ok) ok++
  }
  return ok
}

async function runGamedig (addrs, concurrency, gamedigPath) {
  const { GameDig } = await import(require('node:url').pathToFileURL(gamedigPath).href)
  let next = 0
  let ok = 0
  async function worker () {
    while (next < addrs.length) {
      const [host, port] = addrs[next++]
      try {
        await GameDig.query({ type: 'protocol-valve', host, port, givenPortOnly: true, requestRules: true, socketTimeout: 3000, maxRetries: 1 })
        ok++
      } catch (_) {}
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return ok
}

async function child (name, n, concurrency, gamedigPath) {
  const addrs = targets(n)
  const ok = name === 'ogp' ? await runOgp(addrs, concurrency) : await runGamedig(addrs, concurrency, gamedigPath)
  const u = process.resourceUsage()
  console.log(JSON.stringify({ answered: ok, cpu: (u.userCPUTime + u.systemCPUTime) / 1e6, rss_mb: u.maxRSS / 1024 }))
  process.exit(0)
}

// The farm's CPU seconds so far (Linux /proc; NaN elsewhere): what the servers cost a run
// is a floor under any client's wall time on a machine they share.
function farmCpu (pid) {
  try {
    const f = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8')
    const v = f.slice(f.lastIndexOf(')') + 2).split(' ')
    return (Number(v[11]) + Number(v[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch (_) {
    return NaN
  }
}

function measure (name, n, concurrency, gamedigPath, skip, farmPid) {
  const farm0 = farmCpu(farmPid)
  const t = process.hrtime.bigint()
  const p = spawnSync(process.execPath, [__filename, 'run', name, String(n), String(concurrency), gamedigPath],
    { encoding: 'utf8', env: { ...process.env, BENCH_SKIP: skip, BENCH_OGP: PACKAGE[0] }, maxBuffer: 1 << 24 })
  const wall = Number(process.hrtime.bigint() - t) / 1e9
  const last = (p.stdout || '').trim().split('\n').pop()
  let r = { answered: -1, cpu: NaN, rss_mb: NaN }
  try { r = JSON.parse(last) } catch (_) { process.stderr.write(p.stderr || '') }
  return { name, concurrency, wall, farm_cpu: farmCpu(farmPid) - farm0, ...r }
}

async function farm (ogpLoad, n) {
  const p = spawn(ogpLoad, ['scan-serve', '--ip', IP, '--count', String(n), '--mix', 'a2s', '--offset', '0'],
    { stdio: ['pipe', 'pipe', 'inherit'] })
  const rl = readline.createInterface({ input: p.stdout })
  const line = (await new Promise(resolve => rl.once('line', resolve))).split(/\s+/)
  if (line[0] !== 'ready') throw new Error(`the farm did not start: ${line}`)
  const bound = Number(line[1])
  if (bound !== n) console.error(`note: ${n - bound} of the farm's ports were taken (left out: ${bound} targets)`)
  return { p, skip: line[2] || '', bound }
}

async function main () {
  const argv = process.argv.slice(2)
  if (argv[0] === 'run') return child(argv[1], Number(argv[2]), Number(argv[3]), argv[4])
  const opt = (name, d) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : d }
  const ogpLoad = opt('--ogp-load')
  const gamedigPath = opt('--gamedig') && require('node:path').resolve(opt('--gamedig'))
  if (!ogpLoad || !gamedigPath) throw new Error('usage: a2s_10k.js --ogp-load PATH --gamedig PATH/lib/index.js [--targets N]')
  const n = Number(opt('--targets', '10000'))
  PACKAGE[0] = opt('--ogp') ? require('node:path').resolve(opt('--ogp')) : 'ogp'
  const ogpC = opt('--ogp-concurrency', '512,2048').split(',').map(Number)
  const gdC = opt('--gamedig-concurrency', '10,25,50,100,500').split(',').map(Number)
  const f = await farm(ogpLoad, n)
  const runs = []
  try {
    for (const [name, cs] of [['ogp', ogpC], ['gamedig', gdC]]) {
      for (const c of cs) {
        const r = measure(name, n, c, gamedigPath, f.skip, f.p.pid)
        runs.push(r)
        console.log(`  ${name.padEnd(8)} concurrency ${String(c).padStart(5)}: ${String(r.answered).padStart(6)}/${f.bound} answered in ` +
          `${r.wall.toFixed(2).padStart(7)} s, CPU ${r.cpu.toFixed(2).padStart(7)} s, peak RSS ${r.rss_mb.toFixed(1).padStart(6)} MB, ` +
          `the farm's CPU ${r.farm_cpu.toFixed(2).padStart(5)} s`)
      }
    }
  } finally {
    f.p.stdin.end()
  }
  const best = {}
  for (const r of runs) {
    const b = best[r.name]
    if (!b || r.answered > b.answered || (r.answered === b.answered && r.wall < b.wall)) best[r.name] = r
  }
  const o = best.ogp
  console.log(`\n${n} loopback A2S servers, INFO+PLAYER+RULES each, best run of each client:`)
  for (const name of ['ogp', 'gamedig']) {
    const r = best[name]
    console.log(`  ${name.padEnd(8)} (concurrency ${String(r.concurrency).padStart(5)}) ${String(r.answered).padStart(6)} answered  ` +
      `${r.wall.toFixed(2).padStart(7)} s  CPU ${r.cpu.toFixed(2).padStart(7)} s  peak RSS ${r.rss_mb.toFixed(1).padStart(6)} MB  ` +
      `time ${(r.wall / o.wall).toFixed(1)}x  CPU ${(r.cpu / o.cpu).toFixed(1)}x of ogp.scan`)
  }
}

main().catch(e => { console.error(e); process.exit(1) })
