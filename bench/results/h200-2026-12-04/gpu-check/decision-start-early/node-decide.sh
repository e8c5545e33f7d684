#!/bin/bash
# GPU node, call 4: the default decision's start with the first GPU API started beside the GPU list's read:
# bench-check's decision-start rows (15 rotating repetitions, re-measured by its rule) and the decision's trace.
set -u
G=$PWD/.gpu-lead
t0=$(date +%s)
. .gpu-lead/setup.sh
cd .gpu-lead/tree  # the commit in .gpu-lead/commit.txt, clean (git archive), not the working tree
mkdir -p /tmp/r && cp $G/commit.txt /tmp/r/
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; uptime; } > /tmp/r/node.txt 2>&1
rm -rf build-gpu
meson setup build-gpu . -Dcuda=enabled -Dvulkan=enabled -Dopencl=enabled -Dtools=enabled -Dbenchmarks=enabled --buildtype=release > /tmp/r/setup.log 2>&1 || tail -30 /tmp/r/setup.log
ninja -C build-gpu bench/decision_start examples/devices > /tmp/r/build.log 2>&1; echo "ninja rc=$? after $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
unset ROSTER_DEVICE_SELECTOR ROSTER_DEVICE ROSTER_REQUIRE ROSTER_TUNING
export XDG_CACHE_HOME=/tmp/xdg-bench; mkdir -p $XDG_CACHE_HOME
ROSTER_TRACE=1 build-gpu/examples/devices > /tmp/r/trace-default.txt 2>&1
grep -E "backend (cuda|vulkan|opencl)" /tmp/r/trace-default.txt
build-gpu/bench/decision_start --benchmark_repetitions=1 > /dev/null 2>&1
BENCH_CHECK_NODE="$(hostname -s): NVIDIA H200" python3 scripts/bench-check --no-build --build-dir build-gpu --only 'decision-start-*' --reps 15 --out /tmp/r/bench-check-decision.json > /tmp/r/bench-check.txt 2>&1; echo "exit $?" >> /tmp/r/bench-check.txt
python3 scripts/bench-check --rows /tmp/r/bench-check-decision.json > /tmp/r/rows.txt 2>&1
tail -12 /tmp/r/bench-check.txt; cat /tmp/r/rows.txt
tar czf $OUT/decision.tgz -C /tmp/r .
echo "decide call: $(( $(date +%s) - t0 )) s"
