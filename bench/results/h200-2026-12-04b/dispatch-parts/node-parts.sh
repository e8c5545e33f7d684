#!/bin/bash
# GPU node: where a dispatch's host time goes (kernel_call_bench's cuda_parts), beside cuda_paired/16.
set -u
t0=$(date +%s)
. .gpu-lead/setup.sh
meson setup build-gpu . -Dcuda=enabled -Dvulkan=disabled -Dopencl=disabled -Dtools=disabled -Dbenchmarks=enabled --buildtype=release > "$OUT/setup.log" 2>&1 || tail -30 "$OUT/setup.log"
ninja -C build-gpu bench/kernel_call_bench > "$OUT/build.log" 2>&1; echo "ninja rc=$? $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
build-gpu/bench/kernel_call_bench --benchmark_filter='^(cuda_parts|cuda_paired/16/)' --benchmark_repetitions=3 \
  --benchmark_out="$OUT/parts.json" --benchmark_out_format=json 2>&1 | tee "$OUT/parts.txt" | grep -v "^cuda_paired.*real_time  " | tail -40
echo "call: $(( $(date +%s) - t0 )) s"
