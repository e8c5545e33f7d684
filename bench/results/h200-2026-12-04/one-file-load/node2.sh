#!/bin/bash
# Second call: the one-file program with the driver's PTX JIT left on (NVIDIA's
# OpenCL compiles through it, so CUDA_DISABLE_PTX_JIT=1 stops opencl:1), and
# roster-info bench's Vulkan doubles at 2^26 (1.7-1.8 TB/s for mul..dot in
# the first call, beside 4.2 TB/s for copy).
set -u
T0=$(date +%s)
G=$PWD/.gpu-lead
O=$OUT
exec > >(tee -a $O/log2.txt) 2>&1
export PATH=/usr/local/cuda/bin:$PATH
date -u; nvidia-smi -L
for f in $G/debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$G/build/lib:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
export XDG_CACHE_HOME=/tmp/xdg
chmod +x $G/onefile/one_file_gcc $G/build/bench/* $G/build/tools/* 2>/dev/null
echo "=== one-file (g++ alone), plain environment"
$G/onefile/one_file_gcc cuda:0 vulkan:0 opencl:1 cpu:0; echo "exit $?"
B="$G/build/tools/roster-info bench --no-save --no-kernels --reps 10"
for n in 2^26 2^28 2^24; do echo "=== vulkan:0 alone at $n"; $B --adapter vulkan:0 --size $n 2>&1 | sed -n '/^GB\/s/,/^$/p'; done
echo "=== vulkan:0 at 2^26, ROSTER_VULKAN_VECTOR=0"; ROSTER_VULKAN_VECTOR=0 $B --adapter vulkan:0 --size 2^26 2>&1 | sed -n '/^GB\/s/,/^$/p'
echo "=== opencl:1 and cuda:0 at 2^26"; $B --adapter opencl:1 --adapter cuda:0 --size 2^26 2>&1 | sed -n '/^GB\/s/,/^$/p'
echo "=== vulkan_stream_bench at 2^26"; $G/build/bench/vulkan_stream_bench --n=67108864 --runs=20 2>&1 | grep -E "stream/vulkan/f64|stream/cuda/f64" | head -12
echo "done after $(( $(date +%s) - T0 )) s"
