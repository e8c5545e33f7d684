#pragma once
// A gtest environment for Vulkan test binaries: fails the run when the
// validation layer reported anything, and checks that the layer was on when
// the test environment asked for it (ROSTER_VULKAN_VALIDATION=1).

#include <roster/backends/vulkan.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

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

// One per test binary: the variable is inline, so every translation unit
// that includes this header shares the one registration.
inline const auto* const vulkan_validation_env =
    ::testing::AddGlobalTestEnvironment(new vulkan_validation_environment);

}  // namespace roster_test
