#!/bin/bash
# scripts/bench-check's decision-start rows on the node, from the carried
# decision_start binary (built at .gpu-lead/commit.txt), judged by its rule.
export PATH=/usr/local/cuda/bin:$PATH
G=$PWD/.gpu-lead
O=$OUT
for f in $G/debs/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export LD_LIBRARY_PATH=$G/bin:/usr/local/nvidia/lib64:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $O/r $G/b/bench && cp $G/bin/decision_start $G/b/bench/decision_start
cp $G/commit.txt $O/r/
{ git rev-parse HEAD; git status --porcelain | head -5; } > $O/r/node-tree.txt 2>&1
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv; nproc; uptime; } > $O/r/node.txt 2>&1
unset ROSTER_DEVICE_SELECTOR ROSTER_DEVICE ROSTER_REQUIRE ROSTER_TUNING
export XDG_CACHE_HOME=/tmp/xdg-bench; mkdir -p $XDG_CACHE_HOME
$G/b/bench/decision_start --benchmark_repetitions=1 > /dev/null 2>&1
python3 scripts/bench-check --no-build --build-dir $G/b --only 'decision-start-*' --reps 15 --out $O/r/bench-check-decision.json > $O/r/bench-check.txt 2>&1; echo "exit $?" >> $O/r/bench-check.txt
python3 scripts/bench-check --rows $O/r/bench-check-decision.json > $O/r/rows.txt 2>&1
tar czf $O/results.tgz -C $O/r . && rm -rf $O/r
tar xzf $O/results.tgz -O ./bench-check.txt | tail -15
tar xzf $O/results.tgz -O ./rows.txt
