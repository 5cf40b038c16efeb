#!/usr/bin/env bash
# Installs what the master's browser test (crates/ogp-master/tests/browser/page_test.py)
# needs to drive the web page of `ogp master` in a real headless browser:
#
#   chromium            Debian package `chromium` (/usr/bin/chromium), system-wide
#   chromedriver        Debian package `chromium-driver` (/usr/bin/chromedriver), same version
#   selenium 4.51.0     PyPI, in the venv target/interop/venv (shared with install-interop.sh);
#                       4.52.0 needs a certifi release newer than the index has
#
# Idempotent: what is already installed is left alone, so a second run takes well under
# a second. `apt-get update` runs only when a Debian package is missing. Nothing is
# downloaded at test time: selenium is always given the driver's path, so its
# "selenium-manager" never runs. Any failure is fatal (non-zero exit). Prints one line
# per component with its version.
set -euo pipefail
cd "$(dirname "$0")/.."

SELENIUM_VERSION=4.51.0

DIR=target/interop
VENV="$DIR/venv"

INSTALLER=install-browser
# shellcheck source=install-lib.sh
. scripts/install-lib.sh

mkdir -p "$DIR"

# --- chromium and chromedriver (Debian) ------------------------------------------------
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}"
fi
[ -x /usr/bin/chromium ] || die "chromium is installed but there is no /usr/bin/chromium"
[ -x /usr/bin/chromedriver ] || die "chromium-driver is installed but there is no /usr/bin/chromedriver"
chromium_version=$(dpkg-query -W -f '${Version}' chromium 2>/dev/null || true)
driver_version=$(dpkg-query -W -f '${Version}' chromium-driver 2>/dev/null || true)
[ -n "$chromium_version" ] || chromium_version=$(/usr/bin/chromium --version 2>/dev/null || echo unknown)
[ -n "$driver_version" ] || driver_version=$(/usr/bin/chromedriver --version 2>/dev/null || echo unknown)
echo "chromium $chromium_version (/usr/bin/chromium)"
echo "chromedriver $driver_version (/usr/bin/chromedriver)"

# --- selenium (PyPI, in the venv) ------------------------------------------------------
PY="$VENV/bin/python"
selenium_version() { # the installed selenium version in the venv, or nothing
  "$PY" - <<'EOF' 2>/dev/null || true
from importlib.metadata import version, PackageNotFoundError
from importlib.util import find_spec
try:
    print(version("selenium") if find_spec("selenium") else "")
except PackageNotFoundError:
    print("")
EOF
}
if [ ! -x "$PY" ] || [ "$(selenium_version)" != "$SELENIUM_VERSION" ]; then
  venv_pip "$VENV" "selenium==$SELENIUM_VERSION"
  "$PY" -c 'from selenium import webdriver; from selenium.webdriver.chrome.service import Service' ||
    die "selenium installed but does not import"
fi
got=$(selenium_version)
[ "$got" = "$SELENIUM_VERSION" ] || die "selenium: wanted $SELENIUM_VERSION, found '${got:-nothing}'"
echo "selenium $got ($PY, $("$PY" --version 2>&1))"
