#pragma once
// Private: hooks for roster's own Vulkan tests; not installed, not API.

#include <roster/config.hpp>

#include <string_view>

namespace roster::vulkan::detail {

/// Sends a message through the instance's debug messenger as if the
/// validation layer had reported it; returns false when validation is off.
/// For the test that proves messages are captured.
ROSTER_API bool inject_validation_message(std::string_view text);

}  // namespace roster::vulkan::detail
