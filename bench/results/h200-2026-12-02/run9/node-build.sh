#!/usr/bin/env bash
# GPU node, call 1: BabelStream main's CUDA and OpenMP models, and roster (scripts/gpu-check's own build-gpu).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
{ nvidia-smi; nproc; g++ --version | head -1; nvcc --version | tail -2; meson --version; } > "$OUT/node.txt" 2>&1
bs=.babelstream
# Vulkan headers, loader and glslangValidator, the OpenCL loader: Debian debs carried in .gl/ and .ocl/.
for f in .gl/*.deb .ocl/*.deb; do dpkg -x "$f" /; done; ldconfig
( cmake -S $bs -B build-bs-cuda -DMODEL=cuda -DCUDA_ARCH=sm_90 -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_BUILD_TYPE=Release && cmake --build build-bs-cuda -j 8 ) > "$OUT/babelstream-cuda.log" 2>&1 &
( cmake -S $bs -B build-bs-omp -DMODEL=omp -DCMAKE_BUILD_TYPE=Release && cmake --build build-bs-omp -j 4 ) > "$OUT/babelstream-omp.log" 2>&1 &
rm -rf build-gpu
meson setup build-gpu . -Dcuda=enabled -Dvulkan=enabled -Dopencl=enabled -Dtools=auto --buildtype=release > "$OUT/setup.log" 2>&1 || tail -30 "$OUT/setup.log"
ninja -C build-gpu > "$OUT/build.log" 2>&1; echo "ninja rc=$?"
wait
ls -la build-bs-cuda/cuda-stream build-bs-omp/omp-stream
tail -3 "$OUT/build.log"; grep -m3 -i 'opencl\|tools\|Run-time dependency' "$OUT/setup.log"
echo "build call: $(( $(date +%s) - t0 )) s"
