// Queries an A2S server COUNT times in a row with gamedig (type protocol-valve, which
// asks for a fresh challenge each time) and prints one JSON object on stdout:
// {"answered": n, "asked": COUNT, "errors": ["message", ...]}.
//
// Usage: node gamedig_repeat.mjs GAMEDIG_DIR PORT COUNT
// Used by crates/ogp-cli/tests/spoofed_victim.rs (the victim of a spoofer).

import * as path from 'node:path'
import * as process from 'node:process'
import { pathToFileURL } from 'node:url'

const [dir, port, count] = process.argv.slice(2)
const { GameDig } = await import(pathToFileURL(path.join(dir, 'lib/index.js')).href)
let answered = 0
const errors = []
for (let i = 0; i < Number(count); i++) {
  try {
    await GameDig.query({
      type: 'protocol-valve',
      host: '127.0.0.1',
      port: Number(port),
      givenPortOnly: true,
      socketTimeout: 1000,
      maxRetries: 1
    })
    answered++
  } catch (e) {
    errors.push(String((e && e.message) || e))
  }
}
console.log(JSON.stringify({ answered, asked: Number(count), errors }))
