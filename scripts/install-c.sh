#!/usr/bin/env bash
# Installs what the C API tests (crates/ogp-ffi/tests/c_examples.rs) need: a C and a C++
# compiler and the AddressSanitizer / UndefinedBehaviorSanitizer runtimes the examples are
# built with (`cc -fsanitize=address,undefined`, `c++` for the C++ wrapper), and
# pkg-config (the `ogp.pc.in` check).
#
# Idempotent: when a sanitized test program already links and runs, nothing is done
# (well under a second). Otherwise Debian/Ubuntu packages are installed with apt-get
# (`gcc`, `g++`, `libc6-dev`, `pkg-config`, and the libasan/libubsan matching the compiler). Any failure is
# fatal (non-zero exit). Prints one line with the compiler's version.
set -euo pipefail

CC="${CC:-cc}"
CXX="${CXX:-c++}"

INSTALLER=install-c
# shellcheck source=install-lib.sh
. "$(dirname "$0")/install-lib.sh"

# Whether a sanitized program compiles, links and runs.
sanitizers_work() {
  command -v "$CC" >/dev/null || return 1
  command -v "$CXX" >/dev/null || return 1
  command -v pkg-config >/dev/null || return 1
  local dir
  dir="$(mktemp -d)"
  printf '#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n' >"$dir/t.c"
  printf '#include <string>\nint main() { return std::string("ok").size() == 2 ? 0 : 1; }\n' >"$dir/t.cpp"
  local rc=0
  { "$CC" -fsanitize=address,undefined "$dir/t.c" -o "$dir/t" && "$dir/t" \
    && "$CXX" -std=c++17 -fsanitize=address,undefined "$dir/t.cpp" -o "$dir/tpp" && "$dir/tpp"; } >/dev/null 2>&1 || rc=1
  rm -rf "$dir"
  return "$rc"
}

if ! sanitizers_work; then
  command -v apt-get >/dev/null || die "no working '$CC -fsanitize=address,undefined' and no apt-get: install a C compiler with libasan and libubsan"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc g++ libc6-dev pkg-config >/dev/null
  # The sanitizer runtimes that go with the installed gcc (libasan8 for gcc 12 and 13).
  major="$(gcc -dumpversion | cut -d. -f1)"
  pkgs=()
  for p in "libgcc-${major}-dev" "libstdc++-${major}-dev" libasan8 libubsan1; do
    if apt-cache show "$p" >/dev/null 2>&1; then pkgs+=("$p"); fi
  done
  if [ "${#pkgs[@]}" -gt 0 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}" >/dev/null
  fi
  sanitizers_work || die "'$CC'/'$CXX' -fsanitize=address,undefined still do not work"
fi
echo "install-c: $("$CC" --version | head -n1), $("$CXX" --version | head -n1), ASan and UBSan work"
