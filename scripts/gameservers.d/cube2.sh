# Cube 2 family (issue #38), sourced by scripts/install-gameservers.sh:
#
#   cube2-server       Debian package: /usr/games/cube2-server, Sauerbraten's dedicated
#                      server (ping on port + 1, extinfo)
#   redeclipse 1.6     Debian's redeclipse-server + redeclipse-common, fetched with
#                      `apt-get download` and unpacked with `dpkg -x` into
#                      target/interop/redeclipse (the server depends on redeclipse-data,
#                      938 MB, which a server without clients does not need; it only
#                      wants a maps/ folder that exists). Also Red Eclipse's master (-ms1).
DEBIAN_SERVERS+=("cube2-server=/usr/games/cube2-server")
AFTER_APT+=(cube2_redeclipse)

REDECLIPSE_VERSION=1.6.0-1
REDECLIPSE_DIR=target/interop/redeclipse

cube2_redeclipse() {
  local root="$REDECLIPSE_DIR/root" lib="$REDECLIPSE_DIR/root/usr/lib/games/redeclipse"
  local stamp="$REDECLIPSE_DIR/version"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$REDECLIPSE_VERSION" ] || [ ! -x "$lib/redeclipse-server" ]; then
    note "apt-get download redeclipse-server redeclipse-common ($REDECLIPSE_VERSION) into $REDECLIPSE_DIR"
    rm -rf "$REDECLIPSE_DIR"
    mkdir -p "$REDECLIPSE_DIR/debs" "$root"
    if ! (cd "$REDECLIPSE_DIR/debs" && apt-get download -qq \
      "redeclipse-server=$REDECLIPSE_VERSION" "redeclipse-common=$REDECLIPSE_VERSION" >&2); then
      # The package lists may be missing on a fresh machine: update them once, then retry.
      apt_install ca-certificates
      (cd "$REDECLIPSE_DIR/debs" && apt-get download -qq \
        "redeclipse-server=$REDECLIPSE_VERSION" "redeclipse-common=$REDECLIPSE_VERSION" >&2) ||
        die "apt-get download redeclipse-server redeclipse-common failed"
    fi
    for deb in "$REDECLIPSE_DIR"/debs/*.deb; do
      dpkg -x "$deb" "$root" || die "dpkg -x $deb failed"
    done
    echo "$REDECLIPSE_VERSION" >"$stamp"
  fi
  # The server refuses to start without a maps/ folder in its data directory.
  mkdir -p "$lib/maps"
  [ -e "$lib/maps/readme.txt" ] || echo "no maps: the tests need none" >"$lib/maps/readme.txt"
  [ -x "$lib/redeclipse-server" ] || die "redeclipse: $lib/redeclipse-server missing after dpkg -x"
  echo "redeclipse-server $REDECLIPSE_VERSION ($lib/redeclipse-server)"
}
