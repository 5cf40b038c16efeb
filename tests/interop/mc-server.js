// Starts a real Minecraft: Java Edition server implementation (npm minecraft-protocol,
// online-mode off) on loopback and prints `listening PORT` once it accepts connections.
//
//   node tests/interop/mc-server.js VERSION MOTD MAX_PLAYERS [PORT]
//
// PORT 0 (the default) lets the system pick a free one. NODE_PATH must hold the
// node_modules where scripts/install-gameservers.sh put minecraft-protocol
// (target/interop/npm-mc/node_modules). It runs until killed.
//
// Optional, from the environment, added to the status response:
//   MC_FAVICON   a `data:image/png;base64,…` URL (the server's icon)
//   MC_PLAYERS   `name=uuid,name=uuid…`: the player sample (and the online count)
//   MC_FORGE     `modid=marker,modid=marker…`: a Forge server's forgeData (FML 3)
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
  beforePing: (response) => {
    const env = process.env;
    const pairs = (v) => v.split(',').filter(Boolean).map((p) => p.split('='));
    if (env.MC_FAVICON) response.favicon = env.MC_FAVICON;
    if (env.MC_PLAYERS) {
      response.players.sample = pairs(env.MC_PLAYERS).map(([name, id]) => ({ name, id }));
      response.players.online = response.players.sample.length;
    }
    if (env.MC_FORGE) {
      response.forgeData = {
        channels: [],
        mods: pairs(env.MC_FORGE).map(([modId, modmarker]) => ({ modId, modmarker })),
        fmlNetworkVersion: 3,
      };
    }
    return response;
  },
});
server.on('listening', () => {
  console.log(`listening ${server.socketServer.address().port}`);
});
server.on('error', (e) => {
  console.error(`mc-server: ${e.message}`);
  process.exit(1);
});
