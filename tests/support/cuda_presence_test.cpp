// tests/support/cuda_presence.hpp: no device and no driver skip the CUDA
// tests, a driver that is installed and fails fails them.
#include "cuda_presence.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace {

using roster_test::classify_cuda;
using roster_test::cuda_presence;

TEST(cuda_presence, a_device_runs_the_tests) {
  EXPECT_EQ(classify_cuda(0, 1, true, "cudaSuccess").presence, cuda_presence::present);
}

TEST(cuda_presence, no_device_or_no_driver_skips) {
  EXPECT_EQ(classify_cuda(0, 0, true, "cudaSuccess").presence, cuda_presence::none);
  EXPECT_EQ(classify_cuda(100, 0, true, "cudaErrorNoDevice").presence, cuda_presence::none);
  const auto no_driver = classify_cuda(35, 0, false, "cudaErrorInsufficientDriver");
  EXPECT_EQ(no_driver.presence, cuda_presence::none);
  EXPECT_NE(no_driver.why.find("no NVIDIA driver installed"), std::string::npos) << no_driver.why;
}

TEST(cuda_presence, a_broken_driver_fails) {
  // Installed but older than the runtime, or failing to start.
  for (const auto& [code, name] : {std::pair{35, "cudaErrorInsufficientDriver"}, std::pair{3, "cudaErrorInitializationError"},
                                   std::pair{803, "cudaErrorSystemDriverMismatch"}, std::pair{999, "cudaErrorUnknown"}}) {
    const auto p = classify_cuda(code, 0, true, name);
    EXPECT_EQ(p.presence, cuda_presence::broken) << name;
    EXPECT_NE(p.why.find(name), std::string::npos) << p.why;
  }
}

void require_broken() { ROSTER_TEST_REQUIRE_CUDA(classify_cuda(3, 0, true, "cudaErrorInitializationError")); }
bool ran_on = false;
void require_present() {
  ROSTER_TEST_REQUIRE_CUDA(classify_cuda(0, 1, true, "cudaSuccess"));
  ran_on = true;
}

TEST(cuda_presence, the_macro_fails_the_test_on_a_broken_driver) {
  EXPECT_FATAL_FAILURE(require_broken(), "a broken driver fails these tests instead of skipping them");
}

TEST(cuda_presence, the_macro_lets_the_test_run_on_a_device) {
  require_present();
  EXPECT_TRUE(ran_on);
  EXPECT_FALSE(::testing::Test::HasFailure());
  EXPECT_FALSE(::testing::Test::IsSkipped());
}

}  // namespace
