# NetQuake (issue #38): Debian's quakespasm, run as a dedicated server (`-dedicated`),
# answers the connectionless CCREQ_SERVER_INFO / PLAYER_INFO / RULE_INFO queries.
# (darkplaces-server does not: its server compiles those cases out and answers only
# CCREQ_CONNECT and its own `getinfo`/`getstatus`.)
# Debian has no Quake data: the game logic (progs.dat) is compiled here by Debian's
# fteqcc from our minimal QuakeC in tests/interop/netquake/ (the system globals and
# fields the engine checks, and the entry points it calls) into
# target/interop/netquake/progs.dat; the testkit
# (crates/ogp-testkit/src/gameservers/netquake.rs) writes a BSP29 map next to it.
DEBIAN_SERVERS+=(
  "quakespasm=/usr/games/quakespasm"
  "fteqcc=/usr/bin/fteqcc"
)
AFTER_APT+=(netquake_progs)

# Compiles progs.dat when it is missing or older than its sources.
netquake_progs() {
  local src=tests/interop/netquake out=target/interop/netquake
  local progs="$out/progs.dat" f stale=0
  [ -f "$progs" ] || stale=1
  for f in "$src"/*; do
    [ "$f" -nt "$progs" ] && stale=1
  done
  if [ "$stale" = 1 ]; then
    # fteqcc writes its own log into the folder it runs in: compile a copy.
    rm -rf "$out/build"
    mkdir -p "$out/build"
    cp "$src"/* "$out/build/"
    note "fteqcc: $src -> $progs"
    (cd "$out/build" && fteqcc -srcfile progs.src >../fteqcc.out 2>&1) ||
      die "fteqcc failed: $(tail -n 20 "$out/fteqcc.out")"
    [ -f "$progs" ] || die "fteqcc wrote no $progs"
  fi
  echo "progs.dat $(wc -c <"$progs") bytes ($progs, fteqcc $(dpkg-query -W -f '${Version}' fteqcc))"
}
