#!/bin/sh
# Header-only mode defines no roster symbol in an unnamed namespace (each unit
# would get a copy of its own: an ODR violation when an inline function uses
# it) and no roster function or object with internal linkage other than
# constants. Arguments: nm, then the objects of the two ODR units.
set -eu
nm=$1; shift
found=$("$nm" -C "$@" | grep -E ' [tTdDbBvVwWuU] ' | grep -E 'roster::\(anonymous namespace\)|roster::.*::\(anonymous namespace\)' || true)
if [ -n "$found" ]; then
  echo "roster symbols in an unnamed namespace (one copy per unit in header-only mode):"
  echo "$found" | sort -u | head -40
  exit 1
fi
count=$("$nm" -C "$@" | grep -c ' W roster::' || true)
if [ "$count" -eq 0 ]; then
  echo "no weak roster:: symbol in the objects: were they built header-only?"
  exit 1
fi
echo "ok: $count weak roster symbols, none in an unnamed namespace"
