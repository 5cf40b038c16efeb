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

# --- Debian's servers: one apt-get for every family's missing packages ---------------
# Each family has a file in scripts/gameservers.d/ (sourced here, in name order) that adds
# "PACKAGE=PATH" lines to DEBIAN_SERVERS (PATH proves the package installed) and may add
# the name of a function to AFTER_APT, run once every package is in (downloads that are
# not plain Debian installs, generated files, links).
DEBIAN_SERVERS=("openarena-server=/usr/games/openarena-server")
AFTER_APT=()
for family in scripts/gameservers.d/*.sh; do
  [ -e "$family" ] || continue
  # shellcheck source=/dev/null
  . "$family"
done
missing=()
for line in "${DEBIAN_SERVERS[@]}"; do
  [ -e "${line#*=}" ] || missing+=("${line%%=*}")
done
if [ "${#missing[@]}" != 0 ]; then
  apt_install "${missing[@]}"
fi
for line in "${DEBIAN_SERVERS[@]}"; do
  pkg=${line%%=*} path=${line#*=}
  [ -e "$path" ] || die "$pkg is installed but $path is missing"
  echo "$pkg $(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || echo '?') ($path)"
done
for hook in "${AFTER_APT[@]}"; do
  "$hook"
done

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

