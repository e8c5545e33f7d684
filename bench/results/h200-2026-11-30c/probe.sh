#!/usr/bin/env bash
set -u
o=$OUT/isa; mkdir -p $o; s=.gpu/babelstream/src
g++ -O3 -std=c++20 -fopenmp -Ibackends/cpu/include .gpu/cpu-isa.cpp -o $o/cpu-isa || exit 1
g++ -O3 -std=c++17 -march=native -fopenmp -DOMP -I$s -I$s/omp $s/main.cpp $s/omp/OMPStream.cpp -o $o/omp-native
for r in 1 2 3; do $o/omp-native --arraysize 33554432 --numtimes 100 --csv 2>&1 | grep -E "^(Add|Triad)" | awk -F, '{printf "babelstream-native %s %.1f GB/s (mean)\n", $1, $3*$4*3/$8/1e9}'; done | tee $o/babel.txt
timeout 200 $o/cpu-isa 7 | tee $o/isa.txt
