#!/bin/bash
# Hostile cases of this session on the H200 node, with the roster-info built on the 2-core box.
set -u
cd "$(dirname "$0")/../.dev"
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/nvidia/lib64
RI=$PWD/tools/roster-info
out=${OUT:-/tmp/out}; mkdir -p "$out"
{
echo "== nvidia-smi"; nvidia-smi -L
echo "== roster-info (adapters)"; $RI 2>&1 | head -40
echo "== CUDA_VISIBLE_DEVICES=7 roster-info --json warnings"
CUDA_VISIBLE_DEVICES=7 $RI --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); [print(w["message"], "| Fix:", w["fix"]) for w in d["warnings"]]; print("adapters:", [a["spec"] for a in d["adapters"]])'
echo "== CUDA_VISIBLE_DEVICES=-1 roster-info --json warnings"
CUDA_VISIBLE_DEVICES=-1 $RI --json 2>/dev/null | python3 -c 'import json,sys; d=json.load(sys.stdin); print("warnings:", [w["message"] for w in d["warnings"]]); print("adapters:", [a["spec"] for a in d["adapters"]])'
echo "== bench --adapter cuda:99"
$RI bench --adapter cuda:99 --size 1K --reps 1 --no-save; echo "exit=$?"
echo "== bench cuda:0 with XDG_CACHE_HOME a file"
: > /tmp/afile
XDG_CACHE_HOME=/tmp/afile $RI bench --adapter cuda:0 --size 1M --reps 3 --no-kernels > /tmp/b.txt 2>&1; echo "exit=$?"; tail -4 /tmp/b.txt
echo "== mpirun -np 4, ROSTER_TUNING=measure, XDG_CACHE_HOME a file (rank 0 cannot record)"
start=$(date +%s.%N)
mpirun -np 4 --allow-run-as-root --oversubscribe -x XDG_CACHE_HOME=/tmp/afile -x ROSTER_TUNING=measure \
  -x LD_LIBRARY_PATH $RI --why 2>&1 | grep -E "ROSTER_TUNING=measure|primary" | sort | uniq -c
end=$(date +%s.%N)
echo "mpirun wall: $(python3 -c "print(round($end-$start,1))") s"
} 2>&1 | tee "$out/hostile.txt"
