#!/bin/bash
# GPU node, call 2 (the same warm node): scripts/gpu-check over call 1's build, BabelStream beside it.
set -u
t0=$(date +%s)
. .gpu-lead/setup.sh
if [ ! -f build-gpu/build.ninja ] || [ ! -x /tmp/bs-cuda/cuda-stream ]; then
  echo "the node is fresh: building again"; mkdir -p /tmp/b1; (OUT=/tmp/b1 DIAG=0 bash .gpu-lead/build.sh)
fi
export BABELSTREAM_BIN=/tmp/bs-cuda/cuda-stream BABELSTREAM_COMMIT=57637d5
[ -x /tmp/bs-omp/omp-stream ] && export BABELSTREAM_OMP_BIN=/tmp/bs-omp/omp-stream
[ -x /tmp/base-build/bench/decision_start ] && export GPU_CHECK_BASE_BUILD=/tmp/base-build
export GPU_CHECK_BUDGET_S=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
mkdir -p /tmp/check
OUT=/tmp/check scripts/gpu-check build-gpu > "$OUT/check.txt" 2> "$OUT/check.err"
echo "gpu-check rc=$?"
tail -60 "$OUT/check.txt"
# Where a dispatch's host time goes (shown, not judged), in what is left of the call.
left=$(( 590 - ($(date +%s) - t0) ))
if [ "$left" -gt 20 ]; then
  LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-} timeout $(( left - 8 )) build-gpu/bench/kernel_call_bench \
    --benchmark_filter='^(cuda_parts|cuda_paired/16/)' --benchmark_repetitions=3 \
    --benchmark_out="$OUT/parts.json" --benchmark_out_format=json > "$OUT/parts.txt" 2>&1
  echo "parts rc=$? in ${left} s left"; grep -E "_median" "$OUT/parts.txt" | head -20
fi
cd /tmp && tar czf "$OUT/check.tgz" --exclude='*/xdg-*' --exclude='one-file/one_file' --exclude='one-file/path' check
ls -la "$OUT"
echo "check call: $(( $(date +%s) - t0 )) s"
