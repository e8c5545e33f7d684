#pragma once
// Private: the Vulkan adapters, the physical devices roster can use.

#include <roster/backends/vulkan/detail/instance.hpp>

#include <cstdint>
#include <vector>

namespace roster::vulkan::detail {

/// One Vulkan 1.1 physical device with a compute queue, and its identity.
struct physical {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  adapter_info info;
  std::uint32_t queue_family = 0;
  std::uint32_t timestamp_bits = 0;
  VkPhysicalDeviceProperties props{};
};

/// Lists the usable physical devices, in the order the loader reports them
/// (the ordinals of adapter specs).
expected<std::vector<physical>> physical_devices();

}  // namespace roster::vulkan::detail
