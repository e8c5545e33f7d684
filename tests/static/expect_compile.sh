#!/bin/sh
# Usage: expect_compile.sh fail|pass PATTERN SOURCE COMPILER [ARGS...]
# Compiles SOURCE (syntax only). "fail": the compile must fail and its
# diagnostics must match PATTERN (grep -E). "pass": it must compile.
mode=$1 pattern=$2 source=$3
shift 3
log=$(mktemp) || exit 99
trap 'rm -f "$log"' EXIT
"$@" -std=c++20 -fsyntax-only "$source" >"$log" 2>&1
rc=$?
if [ "$mode" = pass ]; then
  [ $rc -eq 0 ] && exit 0
  echo "expected $source to compile; it failed:"; cat "$log"; exit 1
fi
if [ $rc -eq 0 ]; then
  echo "expected $source to fail to compile; it compiled"; exit 1
fi
if grep -Eq -- "$pattern" "$log"; then
  grep -E -- "$pattern" "$log" | head -n 3
  exit 0
fi
echo "compile of $source failed, but not with /$pattern/:"; cat "$log"; exit 1
