// The compiled CUDA backend: CUDA driver errors as roster errors.
// detail/errors-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/cuda.hpp> includes it instead.
#include <roster/backends/cuda.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cuda/detail/errors-inl.hpp>
#endif

