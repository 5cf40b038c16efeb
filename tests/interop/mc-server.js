// Starts a real Minecraft: Java Edition server implementation (npm minecraft-protocol,
// online-mode off) on loopback and prints `listening PORT` once it accepts connections.
//
//   node tests/interop/mc-server.js VERSION MOTD MAX_PLAYERS [PORT]
//
// PORT 0 (the default) lets the system pick a free one. NODE_PATH must hold the
// node_modules where scripts/install-gameservers.sh put minecraft-protocol
// (target/interop/npm-mc/node_modules). It runs until killed.
'use strict';
const mc = require('minecraft-protocol');

const [version, motd, maxPlayers, port] = process.argv.slice(2);
if (!version || motd === undefined || !maxPlayers) {
  console.error('usage: mc-server.js VERSION MOTD MAX_PLAYERS [PORT]');
  process.exit(2);
}
const server = mc.createServer({
  'online-mode': false,
  host: '127.0.0.1',
  port: Number(port || 0),
  version,
  motd,
  maxPlayers: Number(maxPlayers),
});
server.on('listening', () => {
  console.log(`listening ${server.socketServer.address().port}`);
});
server.on('error', (e) => {
  console.error(`mc-server: ${e.message}`);
  process.exit(1);
});
