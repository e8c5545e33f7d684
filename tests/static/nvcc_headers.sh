#!/bin/sh
# Usage: nvcc_headers.sh NVCC INCLUDE_DIR PROBE.cu [BACKEND.cu ...]
# Compiles PROBE.cu (roster's CUDA-facing headers) with nvcc as CUDA C++20,
# compiled and header-only, and checks that neither it nor any backend .cu
# file reaches Boost.Hana or static_registry.hpp. Skips (77) without nvcc.
nvcc=$1 inc=$2 probe=$3
shift 3
if [ -z "$nvcc" ] || ! [ -x "$nvcc" ]; then echo "nvcc not found: skipped"; exit 77; fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
leak='boost/hana|roster/static_registry\.hpp'
status=0
for mode in "" "-DROSTER_HEADER_ONLY"; do
  if ! "$nvcc" -std=c++20 -x cu $mode -I"$inc" -c "$probe" -o "$tmp/probe.o" >"$tmp/log" 2>&1; then
    echo "nvcc failed on $probe ${mode:-(compiled mode)}:"; cat "$tmp/log"; status=1
  fi
  "$nvcc" -std=c++20 -x cu $mode -I"$inc" -M "$probe" >"$tmp/deps" 2>&1 || { cat "$tmp/deps"; status=1; }
  if grep -Eq "$leak" "$tmp/deps"; then echo "$probe ${mode:-(compiled mode)} reaches:"; grep -Eo "[^ ]*($leak)[^ ]*" "$tmp/deps"; status=1; fi
done
for cu in "$@"; do
  "$nvcc" -std=c++20 -x cu -I"$inc" -I"$(dirname "$cu")" -M "$cu" >"$tmp/deps" 2>&1 || { cat "$tmp/deps"; status=1; }
  if grep -Eq "$leak" "$tmp/deps"; then echo "$cu reaches:"; grep -Eo "[^ ]*($leak)[^ ]*" "$tmp/deps"; status=1; fi
done
# Control: the same check must see Hana through static_registry.hpp.
printf '#include <roster/static_registry.hpp>\n' >"$tmp/control.cu"
"$nvcc" -std=c++20 -x cu -I"$inc" -M "$tmp/control.cu" >"$tmp/deps" 2>&1
if ! grep -Eq 'boost/hana' "$tmp/deps"; then echo "control: the leak check did not see Hana through static_registry.hpp"; status=1; fi
[ $status -eq 0 ] && echo "nvcc compiled the CUDA-facing headers; no Hana reached them"
exit $status
