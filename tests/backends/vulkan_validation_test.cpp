// Run with ROSTER_VULKAN_VALIDATION=1: a message from the validation layer is
// captured, counted, and makes the next call on a device fail, so a
// validation problem fails whichever test triggered it.
#include <roster/acquire.hpp>
#include <roster/backends/vulkan.hpp>
#include <roster/backends/vulkan/detail/testing.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(vulkan_validation, a_reported_problem_fails_the_next_call) {
  auto d = roster::acquire("vulkan:0");
  ASSERT_TRUE(d) << d.error().message();
  ASSERT_TRUE(roster::vulkan::validation().enabled);
  const auto before = roster::vulkan::validation();
  ASSERT_TRUE((*d)->synchronize());

  ASSERT_TRUE(roster::vulkan::detail::inject_validation_message("VUID-roster-test: injected problem"));
  const auto after = roster::vulkan::validation();
  EXPECT_EQ(after.errors, before.errors + 1);
  ASSERT_FALSE(after.messages.empty());
  EXPECT_NE(after.messages.back().find("injected problem"), std::string::npos);

  auto ok = (*d)->synchronize();
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::device_fault);
  EXPECT_NE(ok.error().what().find("injected problem"), std::string_view::npos) << ok.error().message();
  EXPECT_FALSE(ok.error().fix().empty());
  // Reported once: the call after it succeeds again.
  EXPECT_TRUE((*d)->synchronize());
}

}  // namespace
