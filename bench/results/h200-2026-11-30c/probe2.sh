#!/usr/bin/env bash
b=.gpu/build-node; export LD_LIBRARY_PATH=$PWD/$b/lib
.gpu/probe2/probe2 7
$b/bench/cpu_stream_bench --benchmark_filter='^(openmp|roster_cpu_no_streaming)/(copy|mul|add|triad|dot)/' --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true 2>&1 | grep median | awk '{print $1, $NF, $(NF-2)}'
