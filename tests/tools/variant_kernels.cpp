// Test-only CPU kernels linked into roster-info-variants: one op with two
// correct variants and a deliberately wrong one, for `roster-info bench`'s
// timing, checking and recording of kernel variants.
#include <roster/backends/cpu.hpp>
#include <roster/kernels.hpp>

#include "../support/cpu_test_kernels.hpp"

using roster_test::twice;
using roster_test::twice_by_add;
using roster_test::twice_wrong_for_tests;

ROSTER_CPU_KERNEL("bench_twice", "plain", roster::default_variant, twice, roster::write<roster::elem>,
                  roster::read<roster::elem>);
ROSTER_CPU_KERNEL("bench_twice", "by_add", roster::other_variant, twice_by_add, roster::write<roster::elem>,
                  roster::read<roster::elem>);
ROSTER_CPU_KERNEL("bench_twice", "wrong_for_tests", roster::other_variant, twice_wrong_for_tests,
                  roster::write<roster::elem>, roster::read<roster::elem>);
