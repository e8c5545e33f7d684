#!/bin/bash
# The GPU check of the driver-API CUDA backend from binaries built on the CI
# box (.gpu-cuda/pack.sh strips them into .gpu-cuda/bin; carry .gpu-cuda):
# no build on the node. new/: this tree (debugoptimized, like base/);
# base/: the runtime-API backend of the commit before (nvcc_arch=90).
# Runs the CUDA tests, the image's SASS listing and whether it loads with
# the PTX JIT off, time to first device, and STREAM at 2^28 new beside base.
export PATH=/usr/local/cuda/bin:$PATH
G=$PWD/.gpu-lead/cuda
O=$OUT
exec > >(tee -a $O/log.txt) 2>&1
T0=$(date +%s)
date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv
chmod +x $G/new/* $G/base/* 2>/dev/null
export LD_LIBRARY_PATH=$G/lib:/usr/local/cuda/lib64:/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
N="env LD_LIBRARY_PATH=$G/new:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/xdg"
Bse="env LD_LIBRARY_PATH=$G/base:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/xdg"
for t in cuda_nodevice_test cuda_driver_test cuda_device_test cuda_native_test kernels_cuda_test; do
  extra=""; [ $t = cuda_nodevice_test ] && extra="CUDA_VISIBLE_DEVICES=-1"; [ $t = cuda_driver_test ] && extra="--gtest_filter=-OldDriver.*"
  if [ $t = cuda_nodevice_test ]; then $N CUDA_VISIBLE_DEVICES=-1 $G/new/$t > /tmp/$t.log 2>&1
  elif [ $t = cuda_driver_test ]; then $N $G/new/$t --gtest_filter=-OldDriver.* > /tmp/$t.log 2>&1
  else $N $G/new/$t > /tmp/$t.log 2>&1; fi
  rc=$?; echo "TEST $t exit $rc: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ test' /tmp/$t.log | tr '\n' ' ')"
  [ $rc -ne 0 ] && grep -B3 -A12 "Failure\|FAILED" /tmp/$t.log | head -60
done
env LD_LIBRARY_PATH=$G/stub:$G/new $G/new/cuda_driver_test --gtest_filter=OldDriver.* > /tmp/old.log 2>&1; echo "TEST cuda_old_driver exit $?"
for v in plain tiled; do $N $G/new/stencil cuda:0 $v 1000 700 50 > /tmp/st.log 2>&1; echo "TEST stencil $v exit $?: $(tail -1 /tmp/st.log)"; done
python3 scripts/regen-cuda-fatbin --list backends/cuda/include/roster/backends/cuda/detail/fatbin/kernels_fatbin.hpp --want sm_75,sm_80,sm_86,sm_89,sm_90,sm_100,sm_120,compute_75; echo "cuda_fatbin_arch (cuobjdump) exit $?"
python3 -c "import base64,re,sys; t=open(sys.argv[1]).read(); m=re.search(r'image_base64\[\] =((?:\s*\"[^\"]*\")+);', t); open('/tmp/k.fatbin','wb').write(base64.b64decode(''.join(re.findall(r'\"([^\"]*)\"', m.group(1)))))" backends/cuda/include/roster/backends/cuda/detail/fatbin/kernels_fatbin.hpp
cuobjdump -lelf -lptx /tmp/k.fatbin
echo "sm_90 SASS functions: $(cuobjdump -sass -arch sm_90 /tmp/k.fatbin | grep -c 'Function :')"
# With CUDA_DISABLE_PTX_JIT=1 the driver compiles no PTX: a module that loads and a checked dot ran on the SASS.
echo "--- PTX JIT off:"; $N CUDA_DISABLE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 $G/new/cuda_one_file; echo "exit $?"
echo "--- PTX JIT forced (compute_75):"; $N CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 $G/new/cuda_one_file; echo "exit $?"
# Time to first device, whole process (examples/stream cuda:0), 7 each, new and base interleaved.
for i in 1 2 3 4 5 6 7 8 9; do
  s=$(date +%s%N); $N $G/new/stream cuda:0 > /dev/null 2>&1; e=$(date +%s%N); echo "start new $(( (e-s)/1000000 )) ms"
  [ -x $G/base/stream ] && { s=$(date +%s%N); $Bse $G/base/stream cuda:0 > /dev/null 2>&1; e=$(date +%s%N); echo "start base $(( (e-s)/1000000 )) ms"; }
done
# STREAM at 2^28, new beside base, two rounds interleaved.
F='BM_op|BM_stream_host_clock|BM_triad_dot|BM_dispatch_host_cost'
for r in 1; do
  for w in base new; do
    [ $(( $(date +%s) - T0 )) -gt 500 ] && { echo "skipped $w round $r: time"; continue; }
    [ $w = base ] && R=$Bse || R=$N
    $R $G/$w/cuda_stream_bench --benchmark_filter="$F" --benchmark_format=json > $O/stream-$w-$r.json 2>/tmp/s.err; echo "stream $w $r exit $?"; tail -2 /tmp/s.err
  done
done
echo "done after $(( $(date +%s) - T0 )) s"
