#!/bin/bash
# GPU node, call 3: roster-info bench's warm-up on vulkan:0 and cuda:0 at 2^28 with the clocks sampled,
# vulkan_native (glslangValidator carried), and where the default decision's start goes (startdiag).
set -u
t0=$(date +%s)
. .gpu-lead/setup.sh
( g++ -std=c++20 -O2 -Iinclude -Ibackends/cpu/include -Ibackends/cuda/include .gpu-lead/startdiag.cpp -o /tmp/startdiag -pthread -ldl ) > "$OUT/startdiag-build.log" 2>&1 &
which glslangValidator
rm -rf build-gpu
meson setup build-gpu . -Dcuda=enabled -Dvulkan=enabled -Dopencl=enabled -Dtools=enabled -Dbenchmarks=enabled --buildtype=release > "$OUT/setup.log" 2>&1 || tail -30 "$OUT/setup.log"
ninja -C build-gpu tools/roster-info tests/backends/vulkan_native_test > "$OUT/build.log" 2>&1; echo "ninja rc=$? after $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-} XDG_CACHE_HOME=/tmp/xdg
echo "== vulkan_native"; build-gpu/tests/backends/vulkan_native_test --gtest_color=no > "$OUT/vulkan_native.log" 2>&1; echo "exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran" "$OUT/vulkan_native.log"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,pstate,clocks_event_reasons.active --format=csv -lms 200 > "$OUT/clocks.csv" 2>&1 &
smi=$!
echo "== roster-info bench vulkan:0 cuda:0 2^28 $(date -u +%T.%N)"
timeout 200 build-gpu/tools/roster-info bench --no-save --no-kernels --reps 10 --adapter vulkan:0 --adapter cuda:0 --size 2^28 > "$OUT/bench.txt" 2>&1; echo "exit $? $(date -u +%T.%N)"
sed -n '/^GB\/s/,/^$/p' "$OUT/bench.txt"
kill $smi
wait
echo "== startdiag, 9 rounds, rotating"
for r in 1 2 3 4 5 6 7 8 9; do
  set -- nvml cpu cuda seq par; for i in $(seq 1 $(( r % 5 ))); do set -- "${@:2}" "$1"; done
  for m in "$@"; do /tmp/startdiag "$m"; done
done > "$OUT/startdiag.txt" 2>&1
python3 - "$OUT/startdiag.txt" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list); first = collections.defaultdict(list); cuda = collections.defaultdict(list)
for l in open(sys.argv[1]):
    p = l.split()
    if len(p) > 1 and p[2] == "ms":
        d[p[0]].append(float(p[1])); first[p[0]].append(float(p[5].rstrip(','))); cuda[p[0]].append(float(p[8].rstrip(')')))
for m, v in d.items():
    print(f"{m:5} median {statistics.median(v):7.1f} ms  (first part {statistics.median(first[m]):6.1f}, cuda done {statistics.median(cuda[m]):6.1f})  n={len(v)}")
PY
echo "diag call: $(( $(date +%s) - t0 )) s"
