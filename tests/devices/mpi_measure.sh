#!/bin/sh
# Four ranks under a real mpirun, ROSTER_TUNING=measure, an empty tuning file:
# exactly one rank (local rank 0) measures the CPU and writes its record; the
# others read it (a rank that starts after the record is written finds it
# there at once), so the file holds one record and every rank decides cpu:0.
# Usage: mpi_measure.sh MPIRUN PROGRAM
set -u
mpirun=$1
program=$2
cache=$(mktemp -d) || exit 99
trap 'rm -rf "$cache"' EXIT
out=$(XDG_CACHE_HOME=$cache ROSTER_TUNING=measure ROSTER_CPU_THREADS=1 \
  "$mpirun" -np 4 --oversubscribe --allow-run-as-root -x XDG_CACHE_HOME -x ROSTER_TUNING -x ROSTER_CPU_THREADS \
  "$program" 2>&1)
status=$?
echo "$out"
if [ $status -ne 0 ]; then
  echo "FAIL: mpirun exited with $status"
  exit 1
fi
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
