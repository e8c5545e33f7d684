// The compiled Vulkan backend: the loader (dlopen), the instance, validation and the errors of failed calls.
// detail/instance-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/vulkan.hpp> includes it instead.
#include <roster/backends/vulkan.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/vulkan/detail/instance-inl.hpp>
#endif
