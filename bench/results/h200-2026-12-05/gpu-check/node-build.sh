#!/bin/bash
# GPU node, call 1: roster by scripts/gpu-check's own configuration (build-gpu, release, every backend),
# BabelStream main 57637d5 (CUDA and OpenMP models, by its own CMake) beside it.
set -u
t0=$(date +%s)
. .gpu-lead/setup.sh
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,compute_cap --format=csv,noheader; nproc; g++ --version | head -1; nvcc --version | tail -1; meson --version; } > "$OUT/node.txt" 2>&1
bs=.gpu-lead/babelstream
( cmake -S $bs -B /tmp/bs-cuda -DMODEL=cuda -DCUDA_ARCH=sm_90 -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/bs-cuda -j 6 ) > "$OUT/babelstream-cuda-build.log" 2>&1 &
( cmake -S $bs -B /tmp/bs-omp -DMODEL=omp -DBUILD_NATIVE=OFF -DCXX_EXTRA_FLAGS=-mavx2 -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/bs-omp -j 2 ) > "$OUT/babelstream-omp-build.log" 2>&1 &
( g++ -std=c++20 -O2 -Iinclude -Ibackends/cpu/include -Ibackends/vulkan/include .gpu-lead/vkdrop.cpp -o /tmp/vkdrop -pthread -ldl ) > "$OUT/vkdrop-build.log" 2>&1 &
# The anchor of decision-start-vs-runtime-backend: 5b22579 (the runtime-API CUDA backend), its decision_start only.
( cd .gpu-lead/base && meson setup /tmp/base-build . -Dcuda=enabled -Dnvcc_arch=90 -Dvulkan=disabled -Dopencl=disabled -Dtools=disabled -Dbenchmarks=enabled --buildtype=release && ninja -C /tmp/base-build bench/decision_start ) > "$OUT/base-build.log" 2>&1 &
rm -rf build-gpu
meson setup build-gpu . -Dcuda=enabled -Dvulkan=enabled -Dopencl=enabled -Dtools=enabled -Dbenchmarks=enabled --buildtype=release > "$OUT/setup.log" 2>&1 || tail -30 "$OUT/setup.log"
ninja -C build-gpu > "$OUT/build.log" 2>&1; echo "ninja rc=$?"
wait
ls -la /tmp/bs-cuda/cuda-stream /tmp/bs-omp/omp-stream
tail -3 "$OUT/build.log"; grep -E "^ *(cuda|vulkan|opencl|tools|benchmarks)" "$OUT/setup.log" | head
grep -E 'CMAKE_CXX_FLAGS:|CXX_EXTRA_FLAGS|BUILD_NATIVE|CUDA_ARCH|MODEL' /tmp/bs-omp/CMakeCache.txt /tmp/bs-cuda/CMakeCache.txt > "$OUT/babelstream-cmake-cache.txt"
echo "build: $(( $(date +%s) - t0 )) s"
[ "${DIAG:-1}" = 1 ] || exit 0
# The Vulkan drop in roster-info bench: clocks sampled beside a plain triad loop (downloads, idle) and the bench.
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-} XDG_CACHE_HOME=/tmp/xdg
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,pstate,clocks_throttle_reasons.active --format=csv -lms 200 > "$OUT/clocks.csv" 2>&1 &
smi=$!
echo "== vkdrop vulkan:0 $(date -u +%T.%N)"; timeout 90 /tmp/vkdrop vulkan:0; echo "exit $?"
echo "== roster-info bench vulkan:0 2^28 $(date -u +%T.%N)"
timeout 150 build-gpu/tools/roster-info bench --no-save --no-kernels --reps 10 --adapter vulkan:0 --size 2^28 > "$OUT/vk-bench.txt" 2>&1; echo "exit $? $(date -u +%T.%N)"
sed -n '/^GB\/s/,/^$/p' "$OUT/vk-bench.txt"
kill $smi
echo "build call: $(( $(date +%s) - t0 )) s"
