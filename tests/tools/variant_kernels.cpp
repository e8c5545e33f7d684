// Test-only CPU kernels linked into roster-info-variants: one op with two
// correct variants and a deliberately wrong one, for `roster-info bench`'s
// timing, checking and recording of kernel variants.
#include <roster/kernels.hpp>

namespace {

template <class T>
void twice(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* y = a.data<T>(0);
  const T* x = a.data<const T>(1);
  for (std::size_t i = begin; i < end; ++i) y[i] = 2 * x[i];
}
template <class T>
void twice_by_add(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* y = a.data<T>(0);
  const T* x = a.data<const T>(1);
  for (std::size_t i = begin; i < end; ++i) y[i] = x[i] + x[i];
}
// Wrong and fast: it writes nothing.
template <class T>
void twice_wrong_for_tests(const roster::kernel_args&, std::size_t, std::size_t) {}

}  // namespace

ROSTER_CPU_KERNEL("bench_twice", "plain", roster::default_variant, twice, roster::write<roster::elem>,
                  roster::read<roster::elem>);
ROSTER_CPU_KERNEL("bench_twice", "by_add", roster::other_variant, twice_by_add, roster::write<roster::elem>,
                  roster::read<roster::elem>);
ROSTER_CPU_KERNEL("bench_twice", "wrong_for_tests", roster::other_variant, twice_wrong_for_tests,
                  roster::write<roster::elem>, roster::read<roster::elem>);
