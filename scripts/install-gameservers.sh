#!/usr/bin/env bash
# Installs the real game servers that the interop tests start on loopback:
#
#   openarena-server    Debian package (the ioquake3 engine and OpenArena's data,
#                       ~420 MB): /usr/games/openarena-server, a real Quake III
#                       Arena protocol server (shared/docs/reach.md)
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
