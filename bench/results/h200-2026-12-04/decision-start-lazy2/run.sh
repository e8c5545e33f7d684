#!/bin/bash
# One call on the H200 node for the default decision's start (issue 40,
# deliverable 5): decision_start (bare CUDA start, the decision with
# ROSTER_DEVICE_SELECTOR='cuda:*', the default decision) with 9 rotating
# repetitions, whole-process wall times of the same three, the default
# decision's reasons (what it left unasked), and scripts/gpu-check-measure.
export PATH=/usr/local/cuda/bin:$PATH
G=$PWD/.gpu-lead
O=$OUT
for f in $G/debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$G/bin:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
cp $G/commit.txt $O/ 2>/dev/null
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv; nproc; uptime; ls /etc/OpenCL/vendors; } > $O/node.txt 2>&1
unset ROSTER_DEVICE_SELECTOR ROSTER_DEVICE ROSTER_REQUIRE ROSTER_TUNING
export XDG_CACHE_HOME=/tmp/xdg-start; mkdir -p $XDG_CACHE_HOME
# The default decision's reasons and trace.
ROSTER_TRACE=1 $G/bin/decision_start --child roster > $O/trace-default.txt 2>&1; echo "exit $?" >> $O/trace-default.txt
# Warm the driver's caches once, then the gated bench.
$G/bin/decision_start --benchmark_repetitions=1 > /dev/null 2>&1
$G/bin/decision_start --benchmark_repetitions=15 --benchmark_out=$O/decision-start.json > $O/decision-start.txt 2> $O/decision-start.err; echo "exit $?" >> $O/decision-start.txt
# Whole process, median of 9, rotating.
for i in 1 2 3 4 5 6 7 8 9; do
  for m in bare sel all; do
    case $m in
      bare) s=$(date +%s%N); $G/bin/decision_start --child bare >/dev/null 2>&1; e=$(date +%s%N);;
      sel) s=$(date +%s%N); ROSTER_DEVICE_SELECTOR='cuda:*' $G/bin/decision_start --child roster >/dev/null 2>&1; e=$(date +%s%N);;
      all) s=$(date +%s%N); $G/bin/decision_start --child roster >/dev/null 2>&1; e=$(date +%s%N);;
    esac
    echo "$m $(( (e-s)/1000000 ))" >> $O/whole-process.txt
  done
done
# Six fresh measure-mode decisions and a read-mode one (scripts/gpu-check-measure).
mkdir -p $O/b/examples; cp $G/bin/devices $O/b/examples/devices
OUT=$O bash scripts/gpu-check-measure $O/b > $O/gpu-check-measure.txt 2>&1; echo "exit $?" >> $O/gpu-check-measure.txt
rm -rf $O/b
# The read-mode decision after measuring: which APIs it started.
ROSTER_TRACE=1 XDG_CACHE_HOME=$O/measure/xdg-6 $G/bin/decision_start --child roster > $O/trace-after-measure.txt 2>&1
rm -rf $O/measure/xdg-*/nvidia $O/measure/xdg-*/pocl
tar czf $O/measure.tgz -C $O measure && rm -rf $O/measure
cat $O/decision-start.txt $O/gpu-check-measure.txt
python3 - $O/whole-process.txt <<'PY'
import sys, statistics
v = {}
for line in open(sys.argv[1]):
    k, ms = line.split(); v.setdefault(k, []).append(int(ms))
b = statistics.median(v["bare"])
for k in ("bare", "sel", "all"):
    print(f"whole process {k}: median {statistics.median(v[k])} ms ({statistics.median(v[k]) / b:.3f}x) of {sorted(v[k])}")
PY
