#pragma once
// CPU kernel entry points shared by the kernel tests: each test registers
// them under its own op names.

#include <roster/kernels.hpp>

#include <cstddef>

namespace roster_test {

// y[i] += alpha * x[i]
template <class T>
void axpy(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* y = a.data<T>(0);
  const T* x = a.data<const T>(1);
  const T alpha = a.scalar<T>(0);
  for (std::size_t i = begin; i < end; ++i) y[i] += alpha * x[i];
}

// y[i] = 2 * x[i], two correct variants and one deliberately wrong one.
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
// Wrong, and fast: it writes nothing, so it would win any timing.
template <class T>
void twice_wrong_for_tests(const roster::kernel_args&, std::size_t, std::size_t) {}

}  // namespace roster_test
