#!/usr/bin/env bash
# Installs the real game servers that the interop tests start on loopback:
#
#   openarena-server    Debian package (the ioquake3 engine and OpenArena's data,
#                       ~420 MB): /usr/games/openarena-server, a real Quake III
#                       Arena protocol server (shared/docs/reach.md)
#   minecraft-protocol  npm 1.68.0, in target/interop/npm-mc: a real Minecraft: Java
#                       Edition server implementation (started by
#                       tests/interop/mc-server.js, online-mode off)
#
# (mcstatus, the reference Minecraft client the tests compare with, is a query client:
# scripts/install-interop.sh installs it.)
#
# Idempotent: what is already installed is left alone, so a second run takes well under
# a second; `apt-get update` runs only when something is missing. Any failure is fatal:
# a missing server is an install error, never a reason for the tests to skip. Prints one
# line per server with its version.
set -euo pipefail
cd "$(dirname "$0")/.."

INSTALLER=install-gameservers
# shellcheck source=install-lib.sh
. scripts/install-lib.sh

# --- OpenArena (Debian) ---------------------------------------------------------------
OPENARENA=/usr/games/openarena-server
if [ ! -x "$OPENARENA" ]; then
  apt_install openarena-server
fi
[ -x "$OPENARENA" ] || die "openarena-server is installed but $OPENARENA is missing"
echo "openarena-server $(dpkg-query -W -f '${Version}' openarena-server 2>/dev/null || echo '?') ($OPENARENA)"

# --- minecraft-protocol (npm) ---------------------------------------------------------
MC_PROTOCOL_VERSION=1.68.0
NPM_MC=target/interop/npm-mc
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi
mc_version() {
  local f="$NPM_MC/node_modules/minecraft-protocol/package.json"
  [ -f "$f" ] || return 0
  node -e 'process.stdout.write(String(require(process.argv[1]).version))' "$PWD/$f" 2>/dev/null || true
}
if [ "$(mc_version)" != "$MC_PROTOCOL_VERSION" ]; then
  note "npm install minecraft-protocol@$MC_PROTOCOL_VERSION into $NPM_MC"
  mkdir -p "$NPM_MC"
  npm install --prefix "$NPM_MC" --no-audit --no-fund --loglevel=error \
    "minecraft-protocol@$MC_PROTOCOL_VERSION" >&2 || die "npm install minecraft-protocol@$MC_PROTOCOL_VERSION failed"
fi
got=$(mc_version)
[ "$got" = "$MC_PROTOCOL_VERSION" ] || die "minecraft-protocol: wanted $MC_PROTOCOL_VERSION, found '${got:-nothing}'"
echo "minecraft-protocol $got ($NPM_MC, node $(node --version))"

