#pragma once
// A gtest environment for Vulkan test binaries: fails the run when the
// validation layer reported anything, and checks that the layer was on when
// the test environment asked for it (ROSTER_VULKAN_VALIDATION=1). Including
// it also turns on the layer's synchronization validation across
// submissions (see queue_submit_sync_validation below).

#include <roster/backends/vulkan.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace roster_test {

class vulkan_validation_environment : public ::testing::Environment {
 public:
  void TearDown() override {
    const auto report = roster::vulkan::validation();
    const char* want = std::getenv("ROSTER_VULKAN_VALIDATION");
    if (want != nullptr && std::string(want) == "1") {
      EXPECT_TRUE(report.enabled) << "the validation layer is off";
    }
    std::string all;
    for (const auto& m : report.messages) all += m + "\n";
    EXPECT_EQ(report.errors, 0u) << all;
  }
};

// The layer's synchronization validation (roster enables it with
// VkValidationFeaturesEXT) checks only inside each command buffer unless
// VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT is also
// on; the layer (1.3.239, Debian 12) takes that only from VK_LAYER_ENABLES
// or vk_layer_settings.txt, read at vkCreateInstance. Without it a missing
// barrier between two submissions (roster's program, then a user's command
// buffer) goes unreported. Set before main, while the process has one
// thread and before roster creates its instance; a value the caller set is
// kept and extended.
inline constexpr std::string_view queue_submit_enable = "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT";
inline const bool queue_submit_sync_validation = [] {
  const char* have = std::getenv("VK_LAYER_ENABLES");
  std::string value = have != nullptr ? have : "";
  if (value.find(queue_submit_enable) != std::string::npos) return true;
  value += (value.empty() ? "" : ":") + std::string(queue_submit_enable);
  return ::setenv("VK_LAYER_ENABLES", value.c_str(), 1) == 0;
}();

// One per test binary: the variable is inline, so every translation unit
// that includes this header shares the one registration.
inline const auto* const vulkan_validation_env =
    ::testing::AddGlobalTestEnvironment(new vulkan_validation_environment);

}  // namespace roster_test
