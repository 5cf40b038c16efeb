#!/usr/bin/env bash
# Installs the real third-party A2S clients that the interop tests
# (crates/ogp-cli/tests/all/interop_a2s.rs) drive against `ogp serve`, pinned as in
# shared/docs/interop.md §1:
#
#   qstat 2.17          Debian package `qstat` (binary `quakestat`), system-wide
#   gamedig 5.3.3       npm, in target/interop/npm
#   python-a2s 1.4.2    PyPI, in the venv target/interop/venv
#   opengsq 3.7.0       PyPI, in the same venv
#   mcstatus 14.2.0     PyPI, in the same venv (Minecraft: Bedrock pong decoder)
#   pytest 9.2.0, mypy 2.4.1  PyPI, in the same venv (the Python package's tests,
#                       crates/ogp-py/tests)
#   typescript 5.9.3    npm, in target/interop/npm (`tsc --noEmit` on the Node
#                       package's types, crates/ogp-node/tests)
#
# Idempotent: what is already installed at the pinned version is left alone, so a second
# run takes well under a second. `apt-get update` runs only when qstat is missing.
# Any failure is fatal (non-zero exit): a missing peer is an install error, never a
# reason for the tests to skip. Prints one line per peer with its version.
set -euo pipefail
cd "$(dirname "$0")/.."

GAMEDIG_VERSION=5.3.3
PYTHON_A2S_VERSION=1.4.2
OPENGSQ_VERSION=3.7.0
MCSTATUS_VERSION=14.2.0

DIR=target/interop
NPM_PREFIX="$DIR/npm"
VENV="$DIR/venv"

INSTALLER=install-interop
# shellcheck source=install-lib.sh
. scripts/install-lib.sh

mkdir -p "$DIR"

# --- qstat (Debian) -------------------------------------------------------------------
if ! command -v quakestat >/dev/null; then
  apt_install qstat
fi
command -v quakestat >/dev/null || die "qstat is installed but there is no quakestat binary"
qstat_version=$(dpkg-query -W -f '${Version}' qstat 2>/dev/null || true)
[ -n "$qstat_version" ] || qstat_version=$(quakestat 2>&1 | sed -n 's/.*version \([0-9.]*\).*/\1/p' | head -1)
echo "qstat $qstat_version ($(command -v quakestat))"

# --- gamedig (npm) --------------------------------------------------------------------
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt_install nodejs npm
fi
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 16 || (a === 16 && b >= 20) ? 0 : 1)' ||
  die "gamedig $GAMEDIG_VERSION needs node >= 16.20, found $(node --version)"

npm_version() { # the installed version of npm package $1 in $NPM_PREFIX, or nothing
  local f="$NPM_PREFIX/node_modules/$1/package.json"
  [ -f "$f" ] || return 0
  node -e 'process.stdout.write(String(require(process.argv[1]).version))' "$PWD/$f" 2>/dev/null || true
}
npm_pin() { # npm package $1 at version $2 in $NPM_PREFIX (installed unless there), with file $3 in it
  if [ "$(npm_version "$1")" != "$2" ]; then
    note "npm install $1@$2 into $NPM_PREFIX"
    mkdir -p "$NPM_PREFIX"
    npm install --prefix "$NPM_PREFIX" --no-audit --no-fund --loglevel=error "$1@$2" >&2 ||
      die "npm install $1@$2 failed"
  fi
  local got
  got=$(npm_version "$1")
  [ "$got" = "$2" ] || die "$1: wanted $2, found '${got:-nothing}'"
  [ -f "$NPM_PREFIX/node_modules/$1/$3" ] || die "$1: $3 missing"
  echo "$1 $got ($NPM_PREFIX/node_modules/$1/$3)"
}
npm_pin gamedig "$GAMEDIG_VERSION" bin/gamedig.js
echo "node $(node --version)"

# --- typescript: `tsc --noEmit` on the Node package's types (crates/ogp-node/tests) --
TYPESCRIPT_VERSION=5.9.3
npm_pin typescript "$TYPESCRIPT_VERSION" bin/tsc

# --- python-a2s and opengsq (PyPI, in a venv) ----------------------------------------
PY="$VENV/bin/python"
py_versions() { # "python-a2s=V opengsq=V" as installed in the venv (missing: empty)
  "$PY" - <<'EOF' 2>/dev/null || true
from importlib.metadata import version, PackageNotFoundError
from importlib.util import find_spec
out = []
for name, module in (("python-a2s", "a2s"), ("opengsq", "opengsq"), ("mcstatus", "mcstatus")):
    try:
        out.append(f"{name}={version(name) if find_spec(module) else ''}")
    except PackageNotFoundError:
        out.append(f"{name}=")
print(" ".join(out))
EOF
}
want_py="python-a2s=$PYTHON_A2S_VERSION opengsq=$OPENGSQ_VERSION mcstatus=$MCSTATUS_VERSION"
if [ ! -x "$PY" ] || [ "$(py_versions)" != "$want_py" ]; then
  venv_pip "$VENV" "python-a2s==$PYTHON_A2S_VERSION" "opengsq==$OPENGSQ_VERSION" \
    "mcstatus==$MCSTATUS_VERSION"
  "$PY" -c 'import a2s, mcstatus; from opengsq.protocols import Source' ||
    die "python-a2s, opengsq and mcstatus installed but do not import"
fi
got=$(py_versions)
[ "$got" = "$want_py" ] || die "python clients: wanted '$want_py', found '$got'"
echo "python-a2s $PYTHON_A2S_VERSION ($PY, $("$PY" --version 2>&1))"
echo "opengsq $OPENGSQ_VERSION ($PY)"
echo "mcstatus $MCSTATUS_VERSION ($PY)"

# --- SA-MP readers: npm samp-query and PyPI samp-client (interop_samp.rs) -------------
SAMP_QUERY_VERSION=0.1.5
SAMP_CLIENT_VERSION=3.0.1
npm_pin samp-query "$SAMP_QUERY_VERSION" package.json
samp_client_version() {
  "$PY" -c 'from importlib.metadata import version; print(version("samp-client"))' 2>/dev/null || true
}
if [ "$(samp_client_version)" != "$SAMP_CLIENT_VERSION" ]; then
  venv_pip "$VENV" "samp-client==$SAMP_CLIENT_VERSION"
  "$PY" -c 'import samp_client.client' || die "samp-client installed but does not import"
fi
got=$(samp_client_version)
[ "$got" = "$SAMP_CLIENT_VERSION" ] || die "samp-client: wanted $SAMP_CLIENT_VERSION, found '${got:-nothing}'"
echo "samp-client $got ($PY)"

# --- pytest and mypy: the Python package's tests (crates/ogp-py/tests/python.rs) -----
PYTEST_VERSION=9.2.0
MYPY_VERSION=2.4.1
test_tools() {
  "$PY" -c 'from importlib.metadata import version; print(version("pytest"), version("mypy"))' 2>/dev/null || true
}
if [ "$(test_tools)" != "$PYTEST_VERSION $MYPY_VERSION" ]; then
  venv_pip "$VENV" "pytest==$PYTEST_VERSION" "mypy==$MYPY_VERSION"
  "$PY" -c 'import pytest, mypy.api' || die "pytest and mypy installed but do not import"
fi
got=$(test_tools)
[ "$got" = "$PYTEST_VERSION $MYPY_VERSION" ] || die "pytest/mypy: wanted '$PYTEST_VERSION $MYPY_VERSION', found '${got:-nothing}'"
echo "pytest $PYTEST_VERSION, mypy $MYPY_VERSION ($PY)"
