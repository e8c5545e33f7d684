// The compiled CPU backend: the memory available to an allocation (/proc/meminfo, cgroups).
// detail/memory-inl.hpp compiled once; in header-only mode (and
// in a ROSTER_SOURCE file) <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cpu/detail/memory-inl.hpp>
#endif
