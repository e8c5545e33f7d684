#pragma once
/// The Vulkan backend: STREAM programs as SPIR-V compute on any Vulkan 1.1
/// device (discrete GPUs, Mesa's lavapipe on the CPU).
///
/// Link roster_vulkan whole (Meson's roster_vulkan_dep, pkg-config's
/// roster-vulkan and CMake's roster::vulkan do): nothing references its
/// registration, so a plain link of the archive would drop it.

#include <roster/backend.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace roster::vulkan {

/// An opened Vulkan adapter. Its definition holds Vulkan handles and stays
/// private to the backend; use it through roster::device.
class device;

/// The backend registered as "vulkan" (rank 20; no native grid sync, so
/// acquire() wraps its devices in the grid-sync split).
struct backend {
  static constexpr std::string_view id = "vulkan";
  static constexpr int rank = 20;
  static constexpr bool dispatches = true;
  static constexpr op_set ops = op_set::all();
  using device_type = vulkan::device;
  /// Opens Vulkan adapter `ordinal` (the order enumerate() lists).
  static expected<std::unique_ptr<device_type>> open(std::uint32_t ordinal);
  /// Lists the Vulkan 1.1 adapters with a compute queue; empty when there is
  /// no Vulkan loader or driver.
  static expected<std::vector<adapter_info>> enumerate();
};

/// What the Khronos validation layer reported (ROSTER_VULKAN_VALIDATION=1).
struct validation_report {
  bool enabled = false;                ///< the layer is on in this process
  std::uint64_t errors = 0;            ///< validation errors and warnings so far
  std::vector<std::string> messages;   ///< the first ones, for test output
};

/// Returns the validation layer's messages so far (tests assert none).
ROSTER_API validation_report validation();

}  // namespace roster::vulkan
