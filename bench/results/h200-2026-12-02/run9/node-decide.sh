#!/usr/bin/env bash
# GPU node: one decision, every route, with no records and after ROSTER_TUNING=measure.
# roster-info --why (primary/auxiliary), examples/routing (decide() and acquire_preferred),
# roster-info bind (bind_rank) and examples/stream (default_device) under several settings.
set -u
[ -x build-gpu/tools/roster-info ] || bash .node/build.sh
eval "$(scripts/gpu-check-vulkan --setup)"
eval "$(scripts/gpu-check-opencl --setup)"
b=build-gpu
export XDG_CACHE_HOME=$(mktemp -d)
cases() {
  for c in X=1 ROSTER_DEVICE=vulkan:0 ROSTER_DEVICE=opencl:1 'ROSTER_DEVICE_SELECTOR=vulkan:*;cuda:*' \
           'ROSTER_DEVICE_SELECTOR=opencl:*;*:*' ROSTER_DEVICE=cuda:1 CUDA_VISIBLE_DEVICES=-1; do
    echo "== $c"
    env "$c" $b/tools/roster-info --why 2>&1 | grep -E '^  (primary|auxiliary):|^Fix' | cut -c1-220
    env "$c" $b/examples/routing 2>&1 | grep -E 'decided|differ|rror' | head -3
    env "$c" $b/tools/roster-info bind 2>&1 | grep -o '"adapter":"[^"]*"\|rror.*' | head -2
    env "$c" $b/examples/stream 2>&1 | tail -1 | cut -c1-200
  done
}
echo "### no records (XDG_CACHE_HOME empty)"; cases
echo "### ROSTER_TUNING=measure once"
ROSTER_TUNING=measure $b/tools/roster-info --why 2>&1 | grep -E 'primary|by record|measured' | head -8 | cut -c1-300
ls -la "$XDG_CACHE_HOME"/roster 2>&1 | head
echo "### with the records"; cases
