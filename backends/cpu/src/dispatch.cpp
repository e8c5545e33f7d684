// The compiled CPU backend: planning and running programs on the pool.
// detail/dispatch-inl.hpp compiled once; in header-only mode
// <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_HEADER_ONLY)
#  include <roster/backends/cpu/detail/dispatch-inl.hpp>
#endif
