// The compiled CPU backend: open and enumerate, and the anchor that keeps the registration linked.
// detail/registration-inl.hpp compiled once; in header-only mode (and
// in a ROSTER_SOURCE file) <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cpu/detail/registration-inl.hpp>
#endif

// The symbol ROSTER_USE_BACKEND(cpu) and the installed packages refer to.
ROSTER_DEFINE_BACKEND_ANCHOR(cpu);
