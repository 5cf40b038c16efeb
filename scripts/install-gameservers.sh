#!/usr/bin/env bash
# Installs the real game servers that the interop tests start on loopback:
#
#   openarena-server    Debian package (the ioquake3 engine and OpenArena's data,
#                       ~420 MB): /usr/games/openarena-server, a real Quake III
#                       Arena protocol server (shared/docs/reach.md)
#   minecraft-protocol  npm 1.68.0, in target/interop/npm-mc: a real Minecraft: Java
#                       Edition server implementation (started by
#                       tests/interop/mc-server.js, online-mode off)
#   mcstatus            PyPI 14.2.0, in the venv target/interop/venv: the reference
#                       Minecraft status client the interop tests compare with
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
MCSTATUS_VERSION=14.2.0
NPM_MC=target/interop/npm-mc
VENV=target/interop/venv
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

# --- mcstatus (PyPI, in the interop venv) ---------------------------------------------
mcstatus_version() {
  "$VENV/bin/python" -c 'from importlib.metadata import version; import mcstatus; print(version("mcstatus"))' 2>/dev/null || true
}
if [ ! -x "$VENV/bin/python" ] || [ "$(mcstatus_version)" != "$MCSTATUS_VERSION" ]; then
  venv_pip "$VENV" "mcstatus==$MCSTATUS_VERSION"
fi
got=$(mcstatus_version)
[ "$got" = "$MCSTATUS_VERSION" ] || die "mcstatus: wanted $MCSTATUS_VERSION, found '${got:-nothing}'"
echo "mcstatus $got ($VENV/bin/python)"
