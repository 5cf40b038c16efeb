#!/usr/bin/env bash
# GameSpy v3: user-space instructions per whole query of a real Battlefield 2 reply, our
# client against gamedig's (crates/ogp-load/examples/gs3_peer.rs says what is compared).
# Counted by cachegrind, which does not move with the machine's load as times do.
#
#   scripts/gs3-peer.sh [N]     (N queries in the long run, default 200; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."

n=${1:-200}
half=$((n / 2))
command -v valgrind >/dev/null || {
    echo "gs3-peer: valgrind is needed (apt-get install valgrind)" >&2
    exit 1
}
cargo build --profile dist --locked -q -p ogp-load --example gs3_peer
bin=target/dist/examples/gs3_peer

# The replay server runs until its standard input closes.
coproc SERVER { "$bin" serve; }
trap 'exec {SERVER[1]}>&-; wait' EXIT
read -r -t 10 port <&"${SERVER[0]}"

instructions() { # client, queries
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        "$bin" "$1" "$port" "$2" 2>&1 >/dev/null |
        awk '/I *refs/ { gsub(",", "", $NF); print $NF }'
}

declare -A per
for client in ours gamedig; do
    "$bin" "$client" "$port" 1 # prints what each answer holds
    short=$(instructions "$client" "$half")
    long=$(instructions "$client" "$n")
    per[$client]=$(((long - short) / (n - half)))
    echo "$client: ${per[$client]} instructions per query"
done
awk -v o="${per[ours]}" -v g="${per[gamedig]}" \
    'BEGIN { printf "ours / gamedig: %.2f\n", o / g }'
