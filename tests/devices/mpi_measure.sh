#!/bin/sh
# Four ranks under a real mpirun, ROSTER_TUNING=measure, an empty tuning file:
# exactly one rank (local rank 0) measures the CPU and writes its record; the
# others read it (a rank that starts after the record is written finds it
# there at once), so the file holds one record and every rank decides cpu:0.
# Then a tuning folder local rank 0 cannot write (XDG_CACHE_HOME a file): it
# measures, cannot record, and says so; the other three stop waiting at once
# (they said "did not come in 15 s" after waiting it out) and decide cpu:0,
# though rank 0 ends as soon as it has decided (its word outlives it).
# Usage: mpi_measure.sh MPIRUN PROGRAM
set -u
mpirun=$1
program=$2
cache=$(mktemp -d) || exit 99
trap 'rm -rf "$cache"' EXIT
mkdir "$cache/run"
# Runs PROGRAM on four ranks with ROSTER_TUNING=measure and XDG_CACHE_HOME=$1
# (XDG_RUNTIME_DIR, where rank 0 leaves its word, in $cache); its output in
# $out, shown.
launch() {
  out=$(XDG_CACHE_HOME=$1 XDG_RUNTIME_DIR=$cache/run ROSTER_TUNING=measure ROSTER_CPU_THREADS=1 \
    "$mpirun" -np 4 --oversubscribe --allow-run-as-root -x XDG_CACHE_HOME -x XDG_RUNTIME_DIR -x ROSTER_TUNING \
    -x ROSTER_CPU_THREADS "$program" 2>&1)
  status=$?
  echo "$out"
  if [ $status -ne 0 ]; then
    echo "FAIL: mpirun exited with $status (XDG_CACHE_HOME=$1)"
    exit 1
  fi
}

launch "$cache"
measured=$(echo "$out" | grep -c '^roster: ROSTER_TUNING=measure: cpu:0')
decided=$(echo "$out" | grep -c '^rank=[0-3] adapter=cpu:0 ')
read_back=$(echo "$out" | grep -c -e "local rank 0 measured; its records were read" \
  -e "every adapter weighed has a record")
records=$(grep -c '"backend": "cpu"' "$cache/roster/tuning.json" 2>/dev/null || echo 0)
if [ "$measured" -ne 1 ] || [ "$decided" -ne 4 ] || [ "$read_back" -ne 3 ] || [ "$records" -ne 1 ]; then
  echo "FAIL: expected one measurement, four decisions for cpu:0, three ranks reading rank 0's record and one" \
       "record (measured=$measured decided=$decided read=$read_back records=$records)"
  exit 1
fi
echo "PASS: one rank measured and wrote; the other three read its record"

: > "$cache/a-file"
launch "$cache/a-file"
decided=$(echo "$out" | grep -c '^rank=[0-3] adapter=cpu:0 ')
not_recorded=$(echo "$out" | grep -c '^roster: ROSTER_TUNING=measure: not recorded')
told=$(echo "$out" | grep -c '^rank=[1-3] adapter=cpu:0 measure=ROSTER_TUNING=measure: local rank 0 could not record')
if [ "$decided" -ne 4 ] || [ "$not_recorded" -ne 1 ] || [ "$told" -ne 3 ]; then
  echo "FAIL: expected four decisions for cpu:0, rank 0 saying it did not record, and three ranks told so rather" \
       "than waiting out their bound (decided=$decided not_recorded=$not_recorded told=$told)"
  exit 1
fi
echo "PASS: rank 0 could not record, said so, and the other three went on at once"
