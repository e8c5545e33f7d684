// Run with VK_DRIVER_FILES and VK_ICD_FILENAMES pointing at nothing (no
// driver), or with ROSTER_VULKAN_LOADER naming a missing library (no loader):
// the Vulkan backend lists no adapters, its factory returns an error with a
// Fix:, and nothing aborts.
#include <roster/acquire.hpp>
#include <roster/backends/vulkan.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

bool no_loader() { return std::getenv("ROSTER_VULKAN_LOADER") != nullptr; }

TEST(vulkan_without_driver, the_environment_hides_every_driver) {
  const char* files = std::getenv("VK_DRIVER_FILES");
  if (no_loader()) {
    EXPECT_NE(std::string(std::getenv("ROSTER_VULKAN_LOADER")).find("nonexistent"), std::string::npos);
    return;
  }
  ASSERT_NE(files, nullptr) << "run this test with VK_DRIVER_FILES=/nonexistent";
  EXPECT_EQ(std::string(files), "/nonexistent");
}

TEST(vulkan_without_driver, enumerate_is_empty) {
  auto adapters = roster::vulkan::backend::enumerate();
  ASSERT_TRUE(adapters) << adapters.error().message();
  EXPECT_TRUE(adapters->empty());
  // The same through the core's guarded call.
  auto again = roster::enumerate_adapters(*roster::find_backend("vulkan"));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());
}

TEST(vulkan_without_driver, acquire_fails_with_a_fix) {
  for (int i = 0; i < 2; ++i) {  // the answer is stable, not a one-time failure
    auto d = roster::acquire("vulkan:0");
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), roster::errc::unavailable) << d.error().message();
    EXPECT_NE(d.error().what().find("vulkan"), std::string_view::npos) << d.error().message();
    EXPECT_NE(d.error().message().find("\nFix: "), std::string::npos) << d.error().message();
    if (no_loader()) {
      EXPECT_NE(d.error().what().find("loader"), std::string_view::npos) << d.error().message();
      EXPECT_NE(d.error().fix().find("libvulkan1"), std::string_view::npos) << d.error().message();
    } else {
      EXPECT_NE(d.error().fix().find("VK_DRIVER_FILES"), std::string_view::npos) << d.error().message();
    }
  }
}

}  // namespace
