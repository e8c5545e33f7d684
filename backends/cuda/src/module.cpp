// The compiled CUDA backend: the built-in kernels' image (the committed fat image, or the build's own) and launches.
// detail/module-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/cuda.hpp> includes it instead.
#include <roster/backends/cuda.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cuda/detail/module-inl.hpp>
#endif

