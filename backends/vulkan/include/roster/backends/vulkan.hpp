#pragma once
/// The Vulkan backend: STREAM programs as SPIR-V compute on any Vulkan 1.1
/// device (discrete GPUs, Mesa's lavapipe on the CPU).

#include <roster/backend.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

namespace detail {
class vulkan_device;
}  // namespace detail

/// The backend registered as "vulkan" (rank 20; no native grid sync, so
/// acquire() wraps its devices in the grid-sync split).
struct vulkan_backend {
  static constexpr std::string_view id = "vulkan";
  static constexpr int rank = 20;
  static constexpr bool dispatches = true;
  static constexpr op_set ops = op_set::all();
  using device_type = detail::vulkan_device;
  /// Opens Vulkan adapter `ordinal` (the order enumerate() lists).
  static expected<std::unique_ptr<detail::vulkan_device>> open(std::uint32_t ordinal);
  /// Lists the Vulkan 1.1 adapters with a compute queue; empty when there is
  /// no Vulkan loader or driver.
  static expected<std::vector<adapter_info>> enumerate();
};

namespace detail {

/// What the Khronos validation layer reported (ROSTER_VULKAN_VALIDATION=1).
struct vulkan_validation_report {
  bool enabled = false;                ///< the layer is on in this process
  std::uint64_t errors = 0;            ///< validation errors and warnings so far
  std::vector<std::string> messages;   ///< the first ones, for test output
};

/// Returns the validation layer's messages so far (tests assert none).
ROSTER_API vulkan_validation_report vulkan_validation();

/// Sends a message through the instance's debug messenger as if the
/// validation layer had reported it; returns false when validation is off.
/// For the test that proves messages are captured.
ROSTER_API bool vulkan_inject_validation_message(std::string_view text);

}  // namespace detail
}  // namespace roster
