#!/bin/sh
# Mesa's shader cache on a full disk: a Vulkan dispatch with XDG_CACHE_HOME on
# a full file system (a 64 KiB tmpfs, filled) must finish with right results
# and say that Mesa's cache is off, not die of SIGBUS in Mesa's cache thread.
# The tmpfs needs a mount namespace (unshare -rm): where there is none, a SKIP
# that says so.
# Usage: vulkan_full_cache.sh PROGRAM (vulkan_full_cache: triad on vulkan:0)
set -u
program=$1
dir=$(mktemp -d) || exit 99
trap 'rm -rf "$dir"' EXIT
if ! unshare -rm true 2>/dev/null; then
  echo "SKIP: no mount namespace (unshare -rm failed), so no full file system to test on"
  exit 77
fi
out=$(unshare -rm sh -c '
  mount -t tmpfs -o size=64k tmpfs "$1" || exit 98
  dd if=/dev/zero of="$1/fill" bs=4k count=64 2>/dev/null
  unset MESA_SHADER_CACHE_DISABLE MESA_SHADER_CACHE_DIR MESA_GLSL_CACHE_DISABLE MESA_GLSL_CACHE_DIR
  XDG_CACHE_HOME="$1" "$2"' sh "$dir" "$program" 2>&1)
status=$?
echo "$out"
[ $status -eq 98 ] && { echo "SKIP: could not mount a tmpfs in the namespace"; exit 77; }
if [ $status -ne 0 ]; then echo "FAIL: exit $status (138 or 135: SIGBUS)"; exit 1; fi
echo "$out" | grep -q '^triad right' || { echo "FAIL: no result line"; exit 1; }
echo "$out" | grep -q 'MESA_SHADER_CACHE_DISABLE=true' || { echo "FAIL: nothing said of Mesa's cache"; exit 1; }
echo "$out" | grep -q '^Fix: ' || { echo "FAIL: no Fix"; exit 1; }
