#!/bin/bash
# One call on the H200 node, from binaries built on the CI box (carried in
# .gpu-lead): the one-file program built by g++ alone on cuda:0, vulkan:0 and
# opencl:1 (with the PTX JIT off, then forced); the CUDA tests with
# roster::kernels_loaded; roster-info bench's "Kernels' load" (SASS, then
# the PTX JIT forced with the driver's cache off); roster's STREAM beside
# BabelStream 57637d5 (built here by its own CMake) by scripts/gpu-stream-compare.
set -u
T0=$(date +%s)
G=$PWD/.gpu-lead
O=$OUT
exec > >(tee -a $O/log.txt) 2>&1
export PATH=/usr/local/cuda/bin:$PATH
date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
for f in $G/debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$G/build/lib:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export XDG_CACHE_HOME=/tmp/xdg
( cmake -S $G/babelstream -B /tmp/bs -DMODEL=cuda -DCUDA_ARCH=sm_90 -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/bs -j 12 ) > $O/babelstream-build.log 2>&1 &
BS=$!
chmod +x $G/onefile/one_file_gcc $G/build/bench/* $G/build/tools/* $G/build/tests/backends/* 2>/dev/null
echo "=== one-file (g++ alone, commit $(cat $G/onefile/commit.txt)), PTX JIT off"
CUDA_DISABLE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 $G/onefile/one_file_gcc cuda:0 vulkan:0 opencl:1 cpu:0; echo "exit $?"
echo "=== one-file, PTX JIT forced"
CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 $G/onefile/one_file_gcc cuda:0; echo "exit $?"
echo "=== cuda_device_test CudaAdapters.*"
$G/build/tests/backends/cuda_device_test --gtest_filter='CudaAdapters.*' 2>&1 | grep -E "kernels loaded|OK|FAIL|PASSED|Failure" ; echo "exit ${PIPESTATUS[0]}"
CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 $G/build/tests/backends/cuda_device_test --gtest_filter='CudaAdapters.Kernels*' 2>&1 | grep -E "kernels loaded|OK|FAIL|PASSED|Failure"; echo "exit ${PIPESTATUS[0]}"
echo "=== roster-info bench (kernels' load)"
$G/build/tools/roster-info bench --adapter cuda:0 --adapter vulkan:0 --adapter opencl:1 --size 2^26 --reps 10 --no-save --no-kernels > $O/bench.txt 2>&1; echo "exit $?"; sed -n '/^GB\/s/,$p' $O/bench.txt
CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 $G/build/tools/roster-info bench --adapter cuda:0 --size 2^20 --reps 3 --no-save --no-kernels > $O/bench-jit.txt 2>&1; echo "exit $?"; sed -n '/^Kernels/,$p' $O/bench-jit.txt
echo "=== BabelStream build"; wait $BS; echo "exit $? after $(( $(date +%s) - T0 )) s"; tail -2 $O/babelstream-build.log
BIN=$(ls /tmp/bs/cuda-stream 2>/dev/null)
echo "=== stream-compare"
BABELSTREAM_BIN=$BIN BABELSTREAM_COMMIT=57637d5 python3 scripts/gpu-stream-compare $G/build --out $O/sc --rounds 3 \
  --remeasure-rounds 5 --deadline $(( T0 + 190 )) --allow-not-run; echo "exit $?"
cd $O && tar czf results.tgz sc log.txt bench.txt bench-jit.txt babelstream-build.log 2>/dev/null; rm -rf sc
echo "done after $(( $(date +%s) - T0 )) s"
