// A static kernel list on the CPU backend, for the compile-fail snippets:
// saxpy over double (two variants) and float, and iota with an int scalar.
#pragma once
#include <roster/backends/cpu.hpp>
#include <roster/static_kernels.hpp>

#include <cstdint>

namespace roster_test {
template <class T>
void saxpy(const roster::kernel_args&, std::size_t, std::size_t) {}
inline void iota(const roster::kernel_args&, std::size_t, std::size_t) {}

template <class T, roster::fixed_string variant = "plain", bool is_default = roster::default_variant>
using saxpy_k = roster::static_kernel<"saxpy", "cpu", variant, is_default, &saxpy<T>, roster::read_write<T>,
                                      roster::read<T>, roster::scalar<T>>;
using iota_k = roster::static_kernel<"iota", "cpu", "plain", roster::default_variant, &iota,
                                     roster::write<float>, roster::scalar<std::int32_t>>;
using backends = roster::static_registry<roster::cpu::backend>;
using kernels = roster::static_kernels<backends, saxpy_k<double>, saxpy_k<double, "fast", roster::other_variant>,
                                       saxpy_k<float>, iota_k>;

// Returns a call's result on a device nobody opens (the snippets only compile).
inline roster::cpu::device& device() { return *static_cast<roster::cpu::device*>(nullptr); }
inline roster::typed_buffer<double> doubles() { return {}; }
inline roster::typed_buffer<float> floats() { return {}; }
}  // namespace roster_test
