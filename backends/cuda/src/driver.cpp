// The compiled CUDA backend: what the machine offers CUDA, and the error that says what is missing.
// detail/driver-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/cuda.hpp> includes it instead.
#include <roster/backends/cuda.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cuda/detail/driver-inl.hpp>
#endif

