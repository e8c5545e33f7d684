// The compiled CPU backend: open and enumerate, and the anchor that keeps the registration linked.
// detail/registration-inl.hpp compiled once; in header-only mode
// <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_HEADER_ONLY)
#  include <roster/backends/cpu/detail/registration-inl.hpp>
#endif

// The symbol ROSTER_USE_BACKEND(cpu) and the installed packages refer to.
ROSTER_DEFINE_BACKEND_ANCHOR(cpu);
