#!/usr/bin/env bash
# GPU node's CPU only: roster's cpu_stream_bench (release, benchmarks on, no GPU
# backends) and BabelStream's OpenMP model (as .node/run.sh builds it), run
# interleaved in alternating order until TOTAL_S is spent. Raw output in
# $OUT/cpustream.tgz (one folder per round), a summary in $OUT/summary.txt.
set -u
t0=$(date +%s)
TOTAL_S=${TOTAL_S:-380}
out=${OUT:-/tmp/out}; mkdir -p "$out"; raw=/tmp/cpustream; rm -rf $raw; mkdir -p $raw
left() { echo $(( TOTAL_S - ($(date +%s) - t0) )); }
for f in .dev/*.deb; do dpkg -x "$f" / ; done; ldconfig
{ date -u; uname -a; nproc; lscpu; echo "== THP"; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag;
  echo "== nodes"; ls /sys/devices/system/node; cat /sys/devices/system/node/node*/cpulist; grep -E "Huge|MemTotal|MemAvail" /proc/meminfo;
  echo "== affinity"; taskset -pc $$; echo "== env"; env | grep -E "^(OMP|GOMP|KMP|ROSTER)_"; g++ --version | head -1; } >$raw/node.txt 2>&1
( cmake -S .babelstream -B .gpu/bs-omp -DMODEL=omp -DBUILD_NATIVE=OFF -DCXX_EXTRA_FLAGS=-mavx2 \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_POLICY_VERSION_MINIMUM=3.5 >$raw/bs-omp-setup.log 2>&1 &&
  cmake --build .gpu/bs-omp -j 4 -- VERBOSE=1 >$raw/bs-omp-build.log 2>&1; echo "bs rc=$?" >>$raw/bs-omp-build.log ) &
meson setup .gpu/cpu -Dcuda=disabled -Dvulkan=disabled -Dopencl=disabled -Dtools=disabled -Dbenchmarks=enabled \
  --buildtype=release --wrap-mode=nodownload >$raw/setup.log 2>&1 || { tail -30 $raw/setup.log; exit 1; }
timeout 200 ninja -C .gpu/cpu bench/cpu_stream_bench >$raw/build.log 2>&1; echo "ninja rc=$? after $(( $(date +%s) - t0 )) s"
wait; tail -1 $raw/bs-omp-build.log
BS=.gpu/bs-omp/omp-stream; RO=.gpu/cpu/bench/cpu_stream_bench
[ -x $BS ] && [ -x $RO ] || { tail -20 $raw/build.log; exit 1; }
N=33554432
steal() { awk '/^cpu /{print $9}' /proc/stat; }
hp() { sleep 3; grep -E "AnonHugePages|Rss" /proc/$1/smaps_rollup 2>/dev/null | tr '\n' ' '; }
run_bs() {  # $1 round dir
  local s=$(steal); OMP_DISPLAY_ENV=${DISP:-false} OMP_DISPLAY_AFFINITY=${DISP:-false} $BS --arraysize $N --numtimes 100 --csv >$1/bs.csv 2>$1/bs.err &
  local p=$!; [ -n "${HP:-}" ] && echo "bs $(hp $p)" >>$1/hugepages.txt; wait $p; echo "bs rc=$? steal=$(( $(steal) - s ))" >>$1/status.txt; }
run_ro() {
  local s=$(steal); $RO --n=$N --benchmark_filter='^(openmp|roster_cpu_no_streaming)/(copy|mul|add|triad|dot)/' \
    --benchmark_out=$1/ro.json --benchmark_out_format=json >$1/ro.txt 2>&1 &
  local p=$!; [ -n "${HP:-}" ] && echo "ro $(hp $p)" >>$1/hugepages.txt; wait $p; echo "ro rc=$? steal=$(( $(steal) - s ))" >>$1/status.txt; }
i=0
while [ "$(left)" -gt 40 ]; do
  d=$raw/round$i; mkdir -p $d
  if [ $i = 0 ]; then DISP=true HP=1; else DISP=false HP=; fi
  if [ $((i % 2)) = 0 ]; then run_bs $d; run_ro $d; else run_ro $d; run_bs $d; fi
  echo "round $i done at $(( $(date +%s) - t0 )) s: $(cat $d/status.txt | tr '\n' ' ')"
  i=$((i + 1))
done
cp -r .gpu/cpu/meson-logs/meson-log.txt $raw/ 2>/dev/null
python3 - $raw >$out/summary.txt <<'EOF'
import csv, glob, json, os, re, statistics as st, sys
raw = sys.argv[1]
ops = ["copy", "mul", "add", "triad", "dot"]
rows = []
for d in sorted(glob.glob(raw + "/round*"), key=lambda p: int(re.search(r"\d+$", p).group())):
    r = {}
    try:
        lines = open(d + "/bs.csv").read().splitlines()
        h = next(i for i, l in enumerate(lines) if l.startswith("function,"))
        for rec in csv.DictReader(l for l in lines[h:] if "," in l):
            fn = rec["function"].lower()
            nb = (3 if fn in ("add", "triad") else 2) * int(rec["n_elements"]) * int(rec["sizeof"])
            r[("bs", fn)] = nb / float(rec["avg_runtime"]) / 1e9
    except Exception as e:
        print(d, "bs", e)
    try:
        for b in json.load(open(d + "/ro.json"))["benchmarks"]:
            side, op = b["name"].split("/")[:2]
            if b.get("run_type") == "aggregate": continue
            r[(side, op)] = b["GB/s"]
    except Exception as e:
        print(d, "ro", e)
    rows.append((os.path.basename(d), r))
print("mean GB/s per round; bs = BabelStream OpenMP (own process, own arrays); omp = cpu_stream_bench's openmp/ (roster's buffers); ro = roster_cpu_no_streaming")
for op in ops:
    print(f"== {op}")
    for name, r in rows:
        bs, om, ro = r.get(("bs", op)), r.get(("openmp", op)), r.get(("roster_cpu_no_streaming", op))
        f = lambda x: f"{x:7.1f}" if x else "      -"
        print(f"{name:8} bs {f(bs)} omp {f(om)} ro {f(ro)}  ro/bs {ro/bs if ro and bs else 0:.3f} ro/omp {ro/om if ro and om else 0:.3f}")
    for key in ("bs", "openmp", "roster_cpu_no_streaming"):
        v = [r[(key, op)] for _, r in rows if (key, op) in r]
        if v:
            print(f"  {key}: median {st.median(v):.1f} min {min(v):.1f} max {max(v):.1f} n {len(v)}")
EOF
cat $out/summary.txt
tar czf $out/cpustream.tgz -C /tmp cpustream
echo "done after $(( $(date +%s) - t0 )) s"
