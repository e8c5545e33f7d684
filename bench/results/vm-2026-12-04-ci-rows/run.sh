#!/bin/bash
# measure.sh NAME IDS N : runs bench-check --only IDS N times, logs wall time and verdicts
cd /work/main
name=$1 ids=$2 n=$3
for i in $(seq 1 $n); do
  s=$(date +%s.%N)
  python3 scripts/bench-check --no-build --build-dir build-rec --only "$ids" --reps ${REPS:-5} --out /tmp/bcm/$name-$i.json > /tmp/bcm/$name-$i.out 2>/tmp/bcm/$name-$i.err
  rc=$?
  e=$(date +%s.%N)
  load=$(cut -d' ' -f1 /proc/loadavg)
  python3 - "$name" "$i" "$rc" "$(echo "$e - $s" | bc)" "$load" <<'PY'
import json,sys
name,i,rc,wall,load=sys.argv[1:]
d=json.load(open(f"/tmp/bcm/{name}-{i}.json"))
rows="; ".join(f"{r['id']}={r['verdict']}"+(f"({r.get('ratio') or r.get('shown') or 0:.3g},sp{r.get('spread',0)*100:.0f}%,miss{(r.get('miss') or 0)*100:.0f}%)" if r.get('miss') is not None else "") for r in d['rows'])
print(f"{name} run{i} rc={rc} wall={float(wall):.0f}s load={load} :: {rows}", flush=True)
PY
done
