// The compiled CPU backend: the device's life, buffers, transfers and native handles.
// detail/devices/device_cache-inl.hpp compiled once; in header-only mode (and
// in a ROSTER_SOURCE file) <roster/backends/cpu.hpp> includes it instead.
#include <roster/backends/cpu.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/cpu/detail/device-inl.hpp>
#endif
