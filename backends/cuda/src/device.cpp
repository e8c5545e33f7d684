// The compiled CUDA backend: the device's life and memory.
// detail/device-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/cuda.hpp> includes it instead.
#include <roster/backends/cuda.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cuda/detail/device-inl.hpp>
#endif

