#!/bin/bash
# GPU node, call 1: the build (build.sh), then, in what is left of the call, the parts issue 39 still
# lacks at HEAD: the one-file program, and bench-check's decision-start and kernel-call rows with
# the 5b22579 anchor. Insurance against losing the node before call 2 (check.sh, the whole gpu-check).
set -u
t0=$(date +%s)
DIAG=0 bash .gpu-lead/build.sh
. .gpu-lead/setup.sh
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-} XDG_CACHE_HOME=/tmp/xdg
echo "== after build: $(( $(date +%s) - t0 )) s"
mkdir -p "$OUT/lite"
if [ $(( $(date +%s) - t0 )) -lt 380 ]; then
  OUT="$OUT/lite" timeout 150 scripts/gpu-check-one-file build > "$OUT/lite/one-file-build.txt" 2>&1
  OUT="$OUT/lite" timeout 60 scripts/gpu-check-one-file run > "$OUT/lite/one-file.txt" 2>&1
  echo "one-file rc=$?"; cat "$OUT/lite/one-file.txt"
  rm -f "$OUT/lite/one_file" "$OUT/lite/path"
fi
left=$(( 585 - ($(date +%s) - t0) ))
echo "== bench-check with ${left} s left"
if [ "$left" -gt 40 ]; then
  ROSTER_BASE_DECISION_START=/tmp/base-build/bench/decision_start BENCH_CHECK_NODE="node: 1 x H200" \
    timeout $(( left - 5 )) python3 scripts/bench-check --no-build --build-dir build-gpu --only 'decision-start-*,kernel-call-added' \
    --allow-not-run --out "$OUT/lite/bench-check-cuda.json" > "$OUT/lite/bench-check-cuda.log" 2>&1
  echo "bench-check rc=$?"; tail -25 "$OUT/lite/bench-check-cuda.log"
fi
echo "call 1: $(( $(date +%s) - t0 )) s"
