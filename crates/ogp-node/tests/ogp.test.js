'use strict'
// The Node package against `ogp serve`, the real servers tests/node.rs starts (OpenArena,
// the npm Minecraft server, the testkit's SLP responder) and hostile servers started here;
// the gamedig-compatible entry against gamedig itself on the same servers. Run by
// tests/node.rs (`node --test`) with the package copied next to this build's addon.

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const dgram = require('node:dgram')
const net = require('node:net')
const fs = require('node:fs')
const { spawn, spawnSync, execFileSync } = require('node:child_process')

const ogp = require('ogp')

const OGP = process.env.OGP_BIN
const STATE = process.env.OGP_TEST_STATE
const OA = process.env.OGP_TEST_OPENARENA
const MC = process.env.OGP_TEST_MINECRAFT
const SLP = process.env.OGP_TEST_SLP
const GAMEDIG = process.env.OGP_TEST_GAMEDIG

/** The CLI's standard output (its exit status aside: a failed query exits non-zero). */
const cli = (...args) => spawnSync(OGP, args, { encoding: 'utf8', timeout: 60000 }).stdout
const withoutTiming = r => { const { ping_ms: _, ...rest } = r; return rest }
const fds = () => fs.readdirSync('/proc/self/fd').length
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

/** Polls `what()` until it is at most `want` (bounded); the last value. */
async function settle (what, want, limit = 2000) {
  const end = Date.now() + limit
  let v = what()
  while (v > want && Date.now() < end) {
    await sleep(20)
    v = what()
  }
  return v
}

function udp (reply) {
  return new Promise(resolve => {
    const s = dgram.createSocket('udp4')
    s.on('message', (d, peer) => { for (const out of reply(d)) s.send(out, peer.port, peer.address) })
    s.bind(0, '127.0.0.1', () => resolve({ s, addr: `127.0.0.1:${s.address().port}` }))
  })
}

const servers = []
let served, silent, garbage, truncated, flood, drip, closedPort

async function startServe () {
  for (let i = 0; i < 5; i++) {
    const probe = await udp(() => [])
    const port = probe.s.address().port
    probe.s.close()
    const p = spawn(OGP, ['serve', '--state', STATE, '--listen', `127.0.0.1:${port}`, '--quake3',
      '--rate', '10000', '--burst', '10000', '--threads', '1'], { stdio: 'ignore' })
    const c = dgram.createSocket('udp4')
    let done = false
    const up = await new Promise(resolve => {
      const end = Date.now() + 10000
      const ping = () => {
        if (done) return
        if (Date.now() > end || p.exitCode !== null) return resolve(false)
        c.send(Buffer.from('\xff\xff\xff\xffTSource Engine Query\0', 'latin1'), port, '127.0.0.1')
        setTimeout(ping, 50)
      }
      c.on('message', () => resolve(true))
      c.bind(0, '127.0.0.1', ping)
    })
    done = true
    c.close()
    if (up) { servers.push({ close: () => p.kill() }); return `127.0.0.1:${port}` }
    p.kill()
  }
  throw new Error('ogp serve did not start')
}

before(async () => {
  served = await startServe()
  const quiet = await Promise.all(Array.from({ length: 4 }, () => udp(() => [])))
  const junk = await udp(() => [Buffer.from('\x00garbage\x7f'.repeat(20), 'latin1')])
  const cut = await udp(() => [Buffer.from('\xff\xff\xff\xffI\x11Host', 'latin1')])
  const many = await udp(() => Array.from({ length: 300 }, (_, i) =>
    Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff, 0x41]), Buffer.alloc(4, i % 256)])))
  for (const u of [...quiet, junk, cut, many]) servers.push({ close: () => u.s.close() })
  silent = quiet.map(u => u.addr)
  garbage = junk.addr
  truncated = cut.addr
  flood = many.addr
  // A TCP server announcing a 255-byte frame and dripping it, a byte every 50 ms.
  const timers = []
  const ls = net.createServer(c => {
    c.on('error', () => {})
    c.write(Buffer.from([0xff, 0x01, 0x00]))
    const t = setInterval(() => c.write('{'), 50)
    timers.push(t)
    c.on('close', () => clearInterval(t))
  })
  await new Promise(resolve => ls.listen(0, '127.0.0.1', resolve))
  servers.push({ close: () => { timers.forEach(clearInterval); ls.close() } })
  drip = `127.0.0.1:${ls.address().port}`
  const probe = await udp(() => [])
  closedPort = probe.addr
  probe.s.close()
})

after(() => { for (const s of servers) s.close() })

// --- answers ----------------------------------------------------------------------------

for (const protocol of ['ogp', 'a2s', 'gamespy3', 'quake3']) {
  test(`query ${protocol} of ogp serve`, async () => {
    const r = await ogp.query(served, { protocol })
    assert.equal(r.ok, true)
    assert.equal(r.protocol, protocol)
    assert.equal(r.status.host_name, 'Demo Arena #1 – Ünïcödé ✓')
    assert.equal(r.status.players[0].name, 'Alice')
    assert.equal(r.addr, served)
    assert.ok(r.ping_ms >= 0 && r.datagrams >= 1)
  })
}

for (const protocol of [null, 'a2s', 'quake3']) {
  test(`query is the CLI's JSON (${protocol || 'auto'})`, async () => {
    const c = JSON.parse(cli('query', '--json', served, ...(protocol ? ['-p', protocol] : [])))
    const ours = await ogp.query(served, protocol ? { protocol } : {})
    assert.deepEqual(withoutTiming(ours), withoutTiming(c))
    assert.deepEqual(Object.keys(ours), Object.keys(c))
  })
}

test('a refused query is a RefusedError carrying the CLI JSON', async () => {
  const c = JSON.parse(cli('query', '--json', '-p', 'a2s', closedPort))
  await assert.rejects(ogp.query(closedPort, { protocol: 'a2s' }), e => {
    assert.ok(e instanceof ogp.RefusedError && e instanceof ogp.QueryError && e instanceof Error)
    assert.deepEqual(e.result, c)
    assert.equal(e.fault, 'network')
    assert.equal(e.message, `${closedPort}: ${c.message}`)
    return true
  })
})

test('Promise.all of 50 queries', async () => {
  const rs = await Promise.all(Array.from({ length: 50 }, () => ogp.query(served, { protocol: 'a2s' })))
  assert.equal(rs.length, 50)
  assert.ok(rs.every(r => r.status.host_name.startsWith('Demo Arena')))
})

test('scan is `ogp scan --json`', async () => {
  const lines = [`a2s ${served}`, served, '# a comment', `quake3 ${served}`, `a2s ${closedPort}`]
  const ours = {}
  for await (const r of ogp.scan(lines)) ours[r.line] = withoutTiming(r)
  const out = execFileSync(OGP, ['scan', '--json', '-'], { input: lines.join('\n'), encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] })
  const c = {}
  for (const l of out.trim().split('\n')) { const d = JSON.parse(l); c[d.line] = withoutTiming(d) }
  assert.deepEqual(Object.keys(ours).sort(), ['1', '2', '4', '5'])
  assert.deepEqual(ours, c)
})

test('scan yields every target, timeouts too', async () => {
  const rs = []
  const targets = Array(20).fill(`a2s ${served}`).concat(silent.slice(0, 2).map(a => `a2s ${a}`))
  for await (const r of ogp.scan(targets, { timeout: 100, retries: 1, deadline: 1000 })) rs.push(r)
  assert.equal(rs.length, 22)
  assert.equal(rs.filter(r => r.ok).length, 20)
  assert.deepEqual([...new Set(rs.filter(r => !r.ok).map(r => r.error))], ['timeout'])
})

test('scan results cross into JavaScript in batches', async () => {
  const t = Date.now()
  const s = new ogp._native.Scan(Array(300).fill(`a2s ${served}`), { rate: 1000000 })
  const sizes = []
  for (let b = await s.next(); b !== null; b = await s.next()) sizes.push(JSON.parse(b).length)
  assert.equal(sizes.reduce((a, b) => a + b, 0), 300)
  // Each batch but the last gathers for 2 ms (not one result a crossing).
  assert.ok(sizes.length <= (Date.now() - t) / 2 + 1, `${sizes} in ${Date.now() - t} ms`)
})

test('games is `ogp games --json`', () => {
  assert.deepEqual(ogp.games(), JSON.parse(cli('games', '--json')))
  const bf2 = ogp.games('bf2')[0]
  assert.equal(bf2.id, 'bf2')
  assert.equal(bf2.protocol, 'gamespy3')
  assert.equal(bf2.query_port, 29900)
})

test('a game picks protocol and port', async () => {
  await assert.rejects(ogp.query('127.0.0.1', { game: 'bf2', timeout: 200 }), e => {
    assert.ok(e instanceof ogp.RefusedError)
    assert.equal(e.result.target, '127.0.0.1:29900')
    assert.equal(e.result.protocol, 'gamespy3')
    return true
  })
})

test('decode is `ogp decode --json`', () => {
  const hex = 'ffffffff54536f7572636520456e67696e6520517565727900'
  const c = cli('decode', '--json', hex).trim().split('\n').map(l => JSON.parse(l))
  assert.deepEqual(ogp.decode(Buffer.from(hex, 'hex')).messages, c)
  assert.deepEqual(ogp.decode(hex).messages, c)
  assert.equal(c[0].protocol, 'a2s')
  const two = ogp.decode([Buffer.from(hex, 'hex'), new Uint8Array(Buffer.from(hex, 'hex'))], { protocol: 'a2s' })
  assert.equal(two.messages.length, 2)
})

test('decode of garbage is a DecodeError, bad arguments TypeErrors', () => {
  assert.throws(() => ogp.decode(Buffer.from('zzzzz')), { name: 'DecodeError', message: /not a datagram of a known protocol/ })
  assert.throws(() => ogp.decode(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x49, 0x11]), { protocol: 'a2s' }), ogp.DecodeError)
  assert.throws(() => ogp.decode('zz'), TypeError)
  assert.throws(() => ogp.decode([]), /no datagram/)
  assert.throws(() => ogp.decode('00', { protocol: 'quake9' }), /unknown protocol/)
})

// --- real servers -----------------------------------------------------------------------

test('the real OpenArena server', async () => {
  const r = await ogp.query(OA, { protocol: 'quake3', timeout: 2000 })
  assert.equal(r.status.host_name, 'OA test')
  assert.equal(r.status.map.name, 'oa_dm1')
  const auto = await ogp.query(OA, { timeout: 2000 })
  assert.equal(auto.protocol, 'quake3')
  assert.equal(auto.game_id, r.game_id)
  const c = JSON.parse(cli('query', '--json', '-p', 'quake3', '--timeout', '2000', OA))
  assert.deepEqual(r.status, c.status)
})

test('the real Minecraft server', async () => {
  const r = await ogp.query(MC, { protocol: 'minecraft', timeout: 2000 })
  assert.equal(r.status.host_name, 'A real test server')
  assert.equal(r.status.host_name_raw, '§aA §lreal§r test server')
  assert.equal(r.status.slot_max, 20)
})

test('the testkit SLP responder in a scan', async () => {
  const rs = []
  for await (const r of ogp.scan(Array(5).fill(`minecraft ${SLP}`))) rs.push(r)
  assert.equal(rs.length, 5)
  assert.ok(rs.every(r => r.ok && r.status.host_name === 'SLP test' && r.status.player_count === 3))
})

// --- hostile servers --------------------------------------------------------------------

test('a silent server times out on time', async () => {
  const t = Date.now()
  await assert.rejects(ogp.query(silent[0], { protocol: 'a2s', timeout: 100, retries: 1 }), e =>
    e instanceof ogp.TimeoutError && e.fault === 'network')
  const took = Date.now() - t
  assert.ok(took >= 100 && took < 2000, `${took} ms`)
})

test('auto-detection on a silent server times out', async () => {
  await assert.rejects(ogp.query(silent[1], { timeout: 100, retries: 0 }), ogp.TimeoutError)
})

test('a truncated answer is malformed', async () => {
  await assert.rejects(ogp.query(truncated, { protocol: 'a2s', timeout: 200 }), e =>
    e instanceof ogp.MalformedError && e.fault === 'server' && e.result.error === 'malformed')
})

test('garbage is no answer', async () => {
  const t = Date.now()
  await assert.rejects(ogp.query(garbage, { timeout: 100, retries: 1 }), e =>
    e instanceof ogp.TimeoutError || e instanceof ogp.MalformedError)
  assert.ok(Date.now() - t < 3000)
})

test('a flood ends within the deadline', async () => {
  const t = Date.now()
  await assert.rejects(ogp.query(flood, { protocol: 'a2s', timeout: 100, retries: 1 }), ogp.QueryError)
  assert.ok(Date.now() - t < 3000)
})

test('a TCP drip times out', async () => {
  const t = Date.now()
  await assert.rejects(ogp.query(drip, { protocol: 'minecraft', timeout: 200, retries: 0 }), e =>
    e instanceof ogp.TimeoutError && e.detail.includes('minecraft'))
  assert.ok(Date.now() - t < 3000)
})

test('bad arguments are TypeErrors, before anything is sent', async () => {
  await assert.rejects(ogp.query('127.0.0.1', { game: 'valhiem' }), { name: 'TypeError', message: /unknown game/ })
  await assert.rejects(ogp.query('127.0.0.1:1', { protocol: 'quake9' }), /unknown protocol/)
  await assert.rejects(ogp.query('127.0.0.1', { protocol: 'a2s' }), /no port/)
  await assert.rejects(ogp.query('127.0.0.1', { protocol: 'a2s', game: 'bf2' }), /leave out protocol/)
  await assert.rejects(ogp.query('127.0.0.1:1', { timeout: -1 }), /timeout must be a number of milliseconds/)
  assert.throws(() => ogp.scan(['a2s 127.0.0.1:1', 'a2s 127.0.0.1']), { name: 'TypeError', message: /target 2/ })
  assert.throws(() => ogp.scan([], { sockets: 0 }), TypeError)
})

test('an unresolvable name is a ResolveError', async () => {
  await assert.rejects(ogp.query('no-such-host.invalid:27015', { protocol: 'a2s', timeout: 200 }), e =>
    e instanceof ogp.ResolveError && e.fault === 'local')
})

// --- stopping: nothing left running -----------------------------------------------------

async function baseline () {
  await ogp.query(served, { protocol: 'a2s' }) // the runtime and its threads exist
  return [await settle(ogp._native._aliveTasks, 0), fds()]
}

test('leaving a scan early stops it at once and leaks nothing', async () => {
  const [tasks0, fds0] = await baseline()
  const targets = [`a2s ${served}`].concat(...Array(50).fill(silent.map(a => `a2s ${a}`)))
  const t = Date.now()
  for await (const r of ogp.scan(targets, { deadline: 60000, timeout: 5000 })) {
    assert.ok(r.ok)
    break // the generator's finally closes the scan
  }
  assert.ok(Date.now() - t < 1000)
  assert.ok(await settle(ogp._native._aliveTasks, tasks0) <= tasks0)
  assert.ok(await settle(fds, fds0) <= fds0)
})

test('close() stops a scan being awaited', async () => {
  const [tasks0] = await baseline()
  const s = ogp.scan(silent.map(a => `a2s ${a}`), { deadline: 60000, timeout: 5000 })
  const pending = s.next()
  await sleep(200)
  assert.ok(ogp._native._aliveTasks() > tasks0) // the scan runs
  const t = Date.now()
  s.close()
  const r = await pending
  assert.equal(r.done, true)
  assert.ok(Date.now() - t < 500)
  assert.ok(await settle(ogp._native._aliveTasks, tasks0) <= tasks0)
})

// --- the gamedig-compatible entry against gamedig ---------------------------------------

/** gamedig's value as ours: Quake 3's password and maxplayers are the server's strings. */
const num = v => Number(v)
const bool = v => v === true || v === '1' || v === 1
const names = ps => Array.from(ps, p => p.name).sort()

async function compare (options) {
  const { GameDig: Theirs } = await import(GAMEDIG)
  const [ours, theirs] = await Promise.all([
    ogp.GameDig.query({ ...options, socketTimeout: 500, maxRetries: 1 }),
    Theirs.query({ ...options, socketTimeout: 500, maxRetries: 1 })
  ])
  const fields = {
    name: [ours.name, theirs.name],
    map: [ours.map, theirs.map],
    password: [ours.password, bool(theirs.password)],
    maxplayers: [ours.maxplayers, num(theirs.maxplayers)],
    numplayers: [ours.numplayers, num(theirs.numplayers)],
    players: [names(ours.players), names(theirs.players)],
    bots: [names(ours.bots), names(theirs.bots)],
    connect: [ours.connect, theirs.connect],
    queryPort: [ours.queryPort, theirs.queryPort],
    version: [ours.version, theirs.version]
  }
  for (const [k, [a, b]] of Object.entries(fields)) assert.deepEqual(a, b, `${options.type}: ${k}`)
  assert.equal(typeof ours.ping, 'number')
  assert.equal(typeof ours.raw, 'object')
  return [ours, theirs]
}

test('GameDig.query agrees with gamedig: A2S (csgo) on ogp serve', async () => {
  const [host, port] = served.split(':')
  const [ours] = await compare({ type: 'csgo', host, port: Number(port), givenPortOnly: true })
  assert.deepEqual(names(ours.bots), ['Bob the Bot'])
  assert.deepEqual(ours.players[0].raw, { slot: 0, score: 1200, duration: 754 })
})

test('GameDig.query agrees with gamedig: the real OpenArena server', async () => {
  const [host, port] = OA.split(':')
  await compare({ type: 'openarena', host, port: Number(port) })
})

test('GameDig.query agrees with gamedig: the real Minecraft server', async () => {
  const [host, port] = MC.split(':')
  await compare({ type: 'minecraft', host, port: Number(port) })
})

test('GameDig.query rejects as gamedig does, with our error classes', async () => {
  const [host, port] = silent[2].split(':')
  await assert.rejects(ogp.GameDig.query({ type: 'csgo', host, port: Number(port), socketTimeout: 100, maxRetries: 0 }),
    e => e instanceof ogp.TimeoutError && e instanceof Error)
  await assert.rejects(ogp.GameDig.query({ host }), TypeError)
})

// --- lists (ogp list) ----------------------------------------------------------------
// Bodies built from the documented formats (ogp-proto's master::weblist), served on
// loopback: no test reaches the internet.

const MINETEST_LIST = JSON.stringify({ total: { servers: 2, clients: 3 }, list: [
  { address: 'mt.example.org', ip: '203.0.113.7', port: 30000, name: 'Example MT', gameid: 'minetest', clients: 3, clients_max: 20 },
  { address: 'host.example.org', port: 30000 }
] })

function web (body, status = 200) {
  const http = require('node:http')
  const seen = []
  const srv = http.createServer((req, res) => {
    seen.push(req.url)
    res.writeHead(status, { 'Content-Length': Buffer.byteLength(body) })
    res.end(body)
  })
  return new Promise(resolve => srv.listen(0, '127.0.0.1', () =>
    resolve({ url: `http://127.0.0.1:${srv.address().port}/`, seen, close: () => srv.close() })))
}

test('listServers is ogp list --json', async () => {
  const w = await web(MINETEST_LIST)
  try {
    const got = await ogp.listServers(w.url, { kind: 'minetest' })
    // the CLI asynchronously: this process serves the list (spawnSync would block it)
    const { stdout } = await require('node:util').promisify(require('node:child_process').execFile)(OGP, ['list', '--json', '--minetest', w.url])
    const c = stdout.trim().split('\n').map(l => JSON.parse(l))
    assert.deepEqual(got, c)
    assert.equal(got.length, 1) // the entry without an IP address is skipped, as by the CLI
    assert.deepEqual([got[0].addr, got[0].protocols, got[0].name, got[0].players], ['203.0.113.7:30000', ['minetest'], 'Example MT', 3])
    assert.deepEqual(await ogp.listServers(w.url, { kind: 'minetest', limit: 0 }), [])
  } finally { w.close() }
})

test('listServers fails by cause; a Steam key never in the error', async () => {
  const key = '0123456789ABCDEF0123456789ABCDEF'
  const deep = '{"list":[{"name":' + '['.repeat(5000) + ']'.repeat(5000) + '}]}'
  const w = await web(deep)
  const bad = await web('<html>Forbidden</html>', 403)
  const saved = process.env.OGP_STEAM_KEY
  try {
    await assert.rejects(ogp.listServers(w.url, { kind: 'minetest' }), e => e instanceof ogp.ListError && e.kind === 'malformed')
    await assert.rejects(ogp.listServers('127.0.0.1:1', { kind: 'nonsense' }), e => e instanceof ogp.ListError && e.kind === 'usage')
    delete process.env.OGP_STEAM_KEY
    await assert.rejects(ogp.listServers(bad.url, { kind: 'steam' }), e => e.kind === 'usage' && /OGP_STEAM_KEY/.test(e.message))
    assert.deepEqual(bad.seen, [])
    process.env.OGP_STEAM_KEY = key
    await assert.rejects(ogp.listServers(bad.url, { kind: 'steam' }),
      e => e instanceof ogp.ListError && e.kind === 'http' && !e.message.includes(key) && !JSON.stringify(e).includes(key))
    assert.ok(bad.seen[0].includes('key=' + key))
    await assert.rejects(ogp.listServers(w.url, { timeout: 0 }), TypeError)
  } finally {
    if (saved === undefined) delete process.env.OGP_STEAM_KEY; else process.env.OGP_STEAM_KEY = saved
    w.close(); bad.close()
  }
})
