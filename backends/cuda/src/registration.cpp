// The compiled CUDA backend: open, enumerate and the registration.
// detail/registration-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/cuda.hpp> includes it instead.
#include <roster/backends/cuda.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cuda/detail/registration-inl.hpp>
#endif

// The symbol ROSTER_USE_BACKEND(cuda) and the installed packages refer to.
ROSTER_DEFINE_BACKEND_ANCHOR(cuda);

