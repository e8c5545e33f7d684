#!/bin/sh
# Runs the bind program on two ranks with a real mpirun and checks that the
# ranks bound to different circuits (different UUIDs) with no warning.
# Usage: mpi_bind.sh MPIRUN PROGRAM
set -u
mpirun=$1
program=$2
out=$("$mpirun" -np 2 --oversubscribe --allow-run-as-root "$program" 2>&1)
status=$?
echo "$out"
if [ $status -ne 0 ]; then
  echo "FAIL: mpirun exited with $status"
  exit 1
fi
ranks=$(echo "$out" | grep -c '^rank=[01] ')
uuids=$(echo "$out" | sed -n 's/^rank=[01] circuit=[0-9]* uuid=\(GPU-[0-9a-f-]*\)$/\1/p' | sort -u | wc -l)
circuits=$(echo "$out" | sed -n 's/^rank=[01] circuit=\([0-9]*\) .*/\1/p' | sort -u | wc -l)
if [ "$ranks" -ne 2 ] || [ "$uuids" -ne 2 ] || [ "$circuits" -ne 2 ]; then
  echo "FAIL: expected two ranks on two circuits with two UUIDs (ranks=$ranks circuits=$circuits uuids=$uuids)"
  exit 1
fi
if echo "$out" | grep -q '^warning:'; then
  echo "FAIL: unexpected sharing warning"
  exit 1
fi
echo "PASS: the two ranks bound to different circuits"
