#pragma once
// Whether CUDA tests run, skip or fail here, from what the runtime answered
// (tests/support/cuda_gpu.hpp asks it). No device and no driver installed
// skip: that is CI, or a node whose devices the scheduler hid. Any other
// answer is a driver that is there but does not work (one older than the
// runtime, one that fails to start): on a GPU node that must fail the
// tests, never pass them as skipped.

#include <gtest/gtest.h>

#include <string>

namespace roster_test {

enum class cuda_presence { present, none, broken };

struct cuda_probe {
  cuda_presence presence = cuda_presence::none;
  std::string why;  ///< the sentence the skip or the failure prints
};

// The runtime's codes this rule names (driver_types.h).
inline constexpr int cuda_success = 0;
inline constexpr int cuda_error_insufficient_driver = 35;
inline constexpr int cuda_error_no_device = 100;

/// Returns the verdict for cudaGetDeviceCount's answer `code` (its name in
/// `name`) and `count`, where `driver_installed` says whether the driver
/// library (libcuda.so.1) loads.
inline cuda_probe classify_cuda(int code, int count, bool driver_installed, const std::string& name) {
  if (code == cuda_success && count > 0) return {cuda_presence::present, ""};
  if (code == cuda_success || code == cuda_error_no_device)
    return {cuda_presence::none, "no CUDA device visible (none here, or CUDA_VISIBLE_DEVICES hides them)"};
  if (code == cuda_error_insufficient_driver && !driver_installed)
    return {cuda_presence::none, "no NVIDIA driver installed (libcuda.so.1 does not load)"};
  return {cuda_presence::broken, "the CUDA driver is installed but does not work: it answered " + name +
                                     " (" + std::to_string(code) + ")"};
}

}  // namespace roster_test

// Skips the test without a device or a driver, fails it on a broken driver.
#define ROSTER_TEST_REQUIRE_CUDA(probe)                                                                        \
  if (const ::roster_test::cuda_probe roster_test_probe_ = (probe);                                            \
      roster_test_probe_.presence == ::roster_test::cuda_presence::broken)                                     \
    GTEST_FAIL() << roster_test_probe_.why << "; a broken driver fails these tests instead of skipping them"; \
  else if (roster_test_probe_.presence == ::roster_test::cuda_presence::none)                                  \
  GTEST_SKIP() << roster_test_probe_.why << "; these tests run on a GPU node: scripts/gpu-check"
