// The compiled Vulkan backend: open and enumerate, the registration, and the anchor that keeps it linked.
// detail/registration-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/vulkan.hpp> includes it instead.
#include <roster/backends/vulkan.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/vulkan/detail/registration-inl.hpp>
#endif

// The symbol ROSTER_USE_BACKEND(vulkan) and the installed packages refer to.
ROSTER_DEFINE_BACKEND_ANCHOR(vulkan);
