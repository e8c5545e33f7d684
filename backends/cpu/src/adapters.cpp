// The compiled CPU backend: the host adapter and the thread count.
// detail/adapters-inl.hpp compiled once; in header-only mode (and
// in a ROSTER_SOURCE file) <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cpu/detail/adapters-inl.hpp>
#endif
