// The compiled Vulkan backend: the compute pipelines, from the committed SPIR-V headers.
// detail/pipelines-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/vulkan.hpp> includes it instead.
#include <roster/backends/vulkan.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/vulkan/detail/pipelines-inl.hpp>
#endif
