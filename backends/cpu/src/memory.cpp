// The compiled CPU backend: the memory available to an allocation (/proc/meminfo, cgroups).
// detail/memory-inl.hpp compiled once; in header-only mode
// <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_HEADER_ONLY)
#  include <roster/backends/cpu/detail/memory-inl.hpp>
#endif
