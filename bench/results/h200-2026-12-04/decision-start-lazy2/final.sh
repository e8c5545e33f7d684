#!/bin/bash
# One node call: the driver-API CUDA backend's check (cuda-check.sh: tests,
# the image's SASS, start time and STREAM beside the runtime-API backend),
# then the default decision's start and the measure-mode decisions (run.sh);
# everything in one archive.
O=$OUT
mkdir -p $O/r/cuda $O/r/start
OUT=$O/r/cuda timeout 300 bash .gpu-lead/cuda-check.sh > $O/r/cuda/stdout.txt 2>&1; echo "cuda check exit $?" | tee -a $O/r/cuda/stdout.txt
OUT=$O/r/start timeout 150 bash .gpu-lead/run.sh > $O/r/start/stdout.txt 2>&1; echo "start exit $?" >> $O/r/start/stdout.txt
tar czf $O/results.tgz -C $O/r . && rm -rf $O/r
tar xzf $O/results.tgz -O ./cuda/stdout.txt | grep -E "^TEST|exit|start (new|base)|sm_90 SASS|done after" | head -60
tar xzf $O/results.tgz -O ./start/stdout.txt | tail -12
