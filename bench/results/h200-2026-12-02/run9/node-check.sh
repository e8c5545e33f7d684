#!/usr/bin/env bash
# GPU node, call 2 (same warm node): scripts/gpu-check over call 1's build, with BabelStream beside it.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
[ -f build-gpu/build.ninja ] && [ -x build-bs-cuda/cuda-stream ] || bash .node/build.sh
export BABELSTREAM_BIN=$PWD/build-bs-cuda/cuda-stream BABELSTREAM_COMMIT=57637d5
export BABELSTREAM_OMP_BIN=$PWD/build-bs-omp/omp-stream
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json GPU_CHECK_BUDGET_S=${BUDGET:-540}
mkdir -p "$OUT/check"
OUT=$OUT/check scripts/gpu-check build-gpu > "$OUT/check.txt" 2> "$OUT/check.err"
echo "gpu-check rc=$?"
tail -45 "$OUT/check.txt"
echo "check call: $(( $(date +%s) - t0 )) s"
