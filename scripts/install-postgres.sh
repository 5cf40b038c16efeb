#!/usr/bin/env bash
# Installs PostgreSQL's server from Debian's packages for the master's tests
# (crates/ogp-cli/tests/all/master.rs), which run a throwaway cluster of their own (initdb +
# pg_ctl in a temporary directory, as the `postgres` user when run as root).
#
# Idempotent: when initdb and pg_ctl are there, nothing is installed (`apt-get update`
# runs only when something is missing). Any failure is fatal. Prints the version.
set -euo pipefail
cd "$(dirname "$0")/.."

INSTALLER=install-postgres
# shellcheck source=install-lib.sh
. scripts/install-lib.sh

bindir() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1
}

if [ -z "$(bindir)" ] || [ ! -x "$(bindir)/initdb" ] || [ ! -x "$(bindir)/pg_ctl" ]; then
  apt_install postgresql
fi
dir="$(bindir)"
[ -x "$dir/initdb" ] || die "no initdb after installing"
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
  die "no postgres user to run the test cluster as (the Debian package creates it)"
fi
echo "install-postgres: $("$dir/postgres" --version) in $dir" >&2
