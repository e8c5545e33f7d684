#pragma once
// For CUDA test binaries: whether a device is visible, the skip that says
// where the tests run instead, the failure of a broken driver
// (tests/support/cuda_presence.hpp has the rule), and the CUDA device
// behind acquire's wrapper.

#include "cuda_presence.hpp"

#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <roster/backends/cuda/detail/driver_api.hpp>

// The driver's own answer, not roster's: enumerate() reads every driver
// failure as "no adapter", which is right for a program and wrong for a test.
// Asked through the driver API as roster opens it (libcuda.so.1 at run time),
// so a test links no CUDA library. Without the library the code is the
// runtime's cudaErrorInsufficientDriver (35), as cudaGetDeviceCount answers.
namespace roster_test::detail {
inline int device_count(int* n) {
  const auto& cu = roster::cuda::detail::api();
  if (cu.library == nullptr || cu.cuInit == nullptr || cu.cuDeviceGetCount == nullptr)
    return cuda_error_insufficient_driver;
  if (const int e = cu.cuInit(0); e != 0) return e;
  return cu.cuDeviceGetCount(n);
}
inline const char* error_name(int e) {
  const auto& cu = roster::cuda::detail::api();
  const char* name = nullptr;
  if (cu.cuGetErrorName == nullptr || cu.cuGetErrorName(e, &name) != 0) return nullptr;
  return name;
}
}  // namespace roster_test::detail

namespace roster_test {

/// Returns whether this process sees a working CUDA device, none, or a broken driver.
inline cuda_probe probe_cuda() {
  int count = 0;
  const int code = detail::device_count(&count);
  bool installed = true;
  if (code != cuda_success) {
    void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == nullptr) lib = ::dlopen("libcuda.so.1", RTLD_LAZY);
    installed = lib != nullptr;
  }
  const char* name = code == cuda_success ? "CUDA_SUCCESS" : detail::error_name(code);
  return classify_cuda(code, count, installed, name != nullptr ? name : "an unknown error");
}

inline bool have_cuda_device() { return probe_cuda().presence == cuda_presence::present; }

// The CUDA device itself, whether acquire wrapped it in a grid-sync split or not.
inline roster::cuda::device& cuda_of(roster::device& d) {
  if (auto* split = dynamic_cast<roster::grid_sync_split<roster::device>*>(&d))
    return dynamic_cast<roster::cuda::device&>(split->inner());
  return dynamic_cast<roster::cuda::device&>(d);
}

}  // namespace roster_test

#define ROSTER_TEST_NEED_GPU() ROSTER_TEST_REQUIRE_CUDA(::roster_test::probe_cuda())
