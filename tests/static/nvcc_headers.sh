#!/bin/sh
# Usage: nvcc_headers.sh NVCC SOURCE_ROOT PROBE.cu
# Compiles PROBE.cu (roster's CUDA-facing core headers) and, where it exists,
# the CUDA backend's public header with nvcc as CUDA C++20, compiled and
# header-only; checks that neither they nor any backend .cu file reaches
# Boost.Hana or static_registry.hpp. Skips (77) without nvcc.
nvcc=$1 root=$2
probe=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
if [ -z "$nvcc" ] || ! [ -x "$nvcc" ]; then echo "nvcc not found: skipped"; exit 77; fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
leak='boost/hana|roster/static_registry\.hpp'
incs="-I$root/include"
for d in "$root"/backends/*/include; do [ -d "$d" ] && incs="$incs -I$d"; done
probes=$probe
if [ -f "$root/backends/cuda/include/roster/backends/cuda.hpp" ]; then
  printf '#include <roster/backends/cuda.hpp>\n#include "%s"\n' "$probe" >"$tmp/cuda_backend_probe.cu"
  probes="$probes $tmp/cuda_backend_probe.cu"
fi
status=0
check_deps() {  # $1: file, $2: label, rest: flags
  f=$1 label=$2
  shift 2
  "$nvcc" -std=c++20 -x cu "$@" -M "$f" >"$tmp/deps" 2>&1 || { cat "$tmp/deps"; status=1; return; }
  if grep -Eq "$leak" "$tmp/deps"; then echo "$label reaches:"; grep -Eo "[^ ]*($leak)[^ ]*" "$tmp/deps"; status=1; fi
}
for p in $probes; do
  for mode in "" "-DROSTER_HEADER_ONLY"; do
    label="$(basename "$p") ${mode:-(compiled mode)}"
    if ! "$nvcc" -std=c++20 -x cu $mode $incs -c "$p" -o "$tmp/probe.o" >"$tmp/log" 2>&1; then
      echo "nvcc failed on $label:"; cat "$tmp/log"; status=1
    fi
    check_deps "$p" "$label" $mode $incs
  done
  echo "compiled with nvcc: $(basename "$p")"
done
for cu in "$root"/backends/*/src/*.cu; do
  [ -f "$cu" ] || continue
  check_deps "$cu" "$cu" $incs "-I$(dirname "$cu")"
  echo "dependencies checked: $cu"
done
# Control: the same check must see Hana through static_registry.hpp.
printf '#include <roster/static_registry.hpp>\n' >"$tmp/control.cu"
"$nvcc" -std=c++20 -x cu $incs -M "$tmp/control.cu" >"$tmp/deps" 2>&1
if ! grep -Eq 'boost/hana' "$tmp/deps"; then echo "control: the leak check did not see Hana through static_registry.hpp"; status=1; fi
[ $status -eq 0 ] && echo "nvcc compiled the CUDA-facing headers; no Hana reached them"
exit $status
