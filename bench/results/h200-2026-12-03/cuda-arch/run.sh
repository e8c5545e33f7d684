#!/bin/bash
# One call on the H200 node: build roster with the default CUDA architectures,
# list them, run the CUDA suites, STREAM with SASS against forced PTX JIT,
# start time with and without JIT, compile cost, and the hostile cases that
# need the GPU.
export PATH=/usr/local/cuda/bin:/opt/torch/.venv/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH:-}
O=$OUT
cp .gpu-run/commit.txt $O/ 2>/dev/null
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv; nproc; uptime; } > $O/node.txt 2>&1
which cuobjdump >> $O/node.txt 2>&1
B=build-node
set -o pipefail
( time meson setup $B --buildtype=release -Dvulkan=disabled -Dopencl=disabled -Dtools=disabled -Dbenchmarks=enabled -Dtests=enabled ) > $O/setup.log 2>&1 || \
( rm -rf $B; time meson setup $B --buildtype=release -Dvulkan=disabled -Dopencl=disabled -Dtools=disabled -Dbenchmarks=enabled -Dtests=disabled ) >> $O/setup.log 2>&1
grep -A1 'CUDA architectures' $O/setup.log > $O/arch.txt
( time ninja -C $B ) > $O/build.log 2>&1 || { tail -50 $O/build.log; exit 1; }
( time ninja -C $B backends/cuda/kernels.o ) >> $O/build.log 2>&1
python3 tests/backends/cuda_arch_check.py $B/backends/cuda/kernels.o --want 75,80,86,89,90,100,120 --default >> $O/arch.txt 2>&1; echo "cuda_arch_check exit $?" >> $O/arch.txt
if which cuobjdump >/dev/null 2>&1; then cuobjdump --list-elf $B/backends/cuda/kernels.o >> $O/arch.txt 2>&1; cuobjdump --list-ptx $B/backends/cuda/kernels.o >> $O/arch.txt 2>&1; fi
# The CUDA suites.
if [ -d $B/tests ]; then meson test -C $B --no-rebuild --suite cuda --print-errorlogs > $O/test-cuda.log 2>&1; echo "exit $?" >> $O/test-cuda.log; cp $B/meson-logs/testlog.txt $O/testlog-cuda.txt 2>/dev/null; fi
# STREAM at 2^28 with the SASS (default), then with the PTX JIT forced; each 3 rounds, interleaved.
S=$B/bench/cuda_stream_bench
for round in 1 2; do
  $S --benchmark_filter='BM_stream_host_clock' --benchmark_format=json > $O/stream-sass-$round.json 2>$O/stream-sass-$round.err
  CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 $S --benchmark_filter='BM_stream_host_clock' --benchmark_format=json > $O/stream-ptxjit-$round.json 2>$O/stream-ptxjit-$round.err
done
# Time to first device, whole process, 9 each, interleaved: SASS, PTX JIT without cache.
E=$B/examples/stream
for i in 1 2 3 4 5 6 7 8 9; do
  s=$(date +%s%N); XDG_CACHE_HOME=$O/xdg $E cuda:0 > /dev/null 2>&1; e=$(date +%s%N); echo "sass $(( (e-s)/1000000 ))" >> $O/start.txt
  s=$(date +%s%N); CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 XDG_CACHE_HOME=$O/xdg $E cuda:0 > /dev/null 2>&1; e=$(date +%s%N); echo "ptxjit $(( (e-s)/1000000 ))" >> $O/start.txt
done
XDG_CACHE_HOME=$O/xdg $E cuda:0 > $O/stream-example.txt 2>&1; echo "exit $?" >> $O/stream-example.txt
CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_DISABLE=1 XDG_CACHE_HOME=$O/xdg $E cuda:0 > $O/stream-example-ptxjit.txt 2>&1; echo "exit $?" >> $O/stream-example-ptxjit.txt
# Compile cost on the node (the header-only ceiling's node figure).
[ -x $B/bench/compile_cost ] && $B/bench/compile_cost --benchmark_repetitions=3 --benchmark_out=$O/compile_cost.json > $O/compile_cost.txt 2>&1
# Hostile cases that need the GPU: a duplicated CUDA mask; two programs measuring at once.
for v in 0,0 0; do CUDA_VISIBLE_DEVICES=$v XDG_CACHE_HOME=$O/xdg-mask $B/examples/devices > $O/mask-$v.txt 2>&1; echo "exit $?" >> $O/mask-$v.txt; done
mkdir -p $O/xdg-two
( ROSTER_TUNING=measure XDG_CACHE_HOME=$O/xdg-two $E > $O/measure-a.txt 2>&1; echo "exit $?" >> $O/measure-a.txt ) &
( ROSTER_TUNING=measure XDG_CACHE_HOME=$O/xdg-two $E > $O/measure-b.txt 2>&1; echo "exit $?" >> $O/measure-b.txt ) &
wait
cp $O/xdg-two/roster/tuning.json $O/measure-two-tuning.json 2>/dev/null
( ROSTER_TUNING=measure XDG_CACHE_HOME=$O/xdg-alone $E > $O/measure-alone.txt 2>&1 )
cp $O/xdg-alone/roster/tuning.json $O/measure-alone-tuning.json 2>/dev/null
rm -rf $O/xdg $O/xdg-mask
echo done > $O/done.txt
cd $O && tar czf /tmp/gpu-results.tgz --exclude=xdg-two --exclude=xdg-alone . && rm -rf $O/* && mv /tmp/gpu-results.tgz $O/
