// The compiled CPU backend: the host adapter and the thread count.
// detail/adapters-inl.hpp compiled once; in header-only mode
// <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_HEADER_ONLY)
#  include <roster/backends/cpu/detail/adapters-inl.hpp>
#endif
