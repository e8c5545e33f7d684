// The compiled Vulkan backend: Mesa's shader cache turned off on a nearly full disk.
// detail/mesa_cache-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/vulkan.hpp> includes it instead.
#include <roster/backends/vulkan.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/vulkan/detail/mesa_cache-inl.hpp>
#endif
