# Shared by the scripts/install-*.sh installers (sourced, not run): messages, root, and
# apt-get run at most once per installer. Set INSTALLER to the installer's name first.

die() {
  echo "${INSTALLER:-install}: $*" >&2
  exit 1
}

note() { echo "${INSTALLER:-install}: $*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

apt_updated=0
# apt_install PACKAGE...: `apt-get update` once, then install without recommends.
apt_install() {
  if [ "$apt_updated" = 0 ]; then
    note "apt-get update (for: $*)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 ||
      die "apt-get update failed"
    apt_updated=1
  fi
  note "apt-get install $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 ||
    die "apt-get install $* failed"
}

# venv_pip VENV PACKAGE==VERSION...: creates the venv when missing (python3-venv from
# Debian if needed), then pip-installs the pinned packages into it.
venv_pip() {
  local venv="$1"
  shift
  if [ ! -x "$venv/bin/python" ]; then
    python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
    note "python3 -m venv $venv"
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 || die "python3 -m venv $venv failed"
  fi
  note "pip install $* into $venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "$@" >&2 ||
    die "pip install $* failed"
}
