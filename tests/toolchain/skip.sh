#!/bin/sh
# Stands in for a test that this toolchain cannot build: prints why and exits
# 77, which meson test counts as SKIP (the reason is in testlog.txt).
# usage: skip.sh REASON...
echo "SKIP: $*"
exit 77
