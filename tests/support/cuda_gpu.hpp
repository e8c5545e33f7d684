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

// The runtime's own answer, not roster's: enumerate() reads every driver
// failure as "no adapter", which is right for a program and wrong for a test.
// A test built without the CUDA headers on its path declares the two calls.
#if __has_include(<cuda_runtime_api.h>)
#  include <cuda_runtime_api.h>
namespace roster_test::detail {
inline int device_count(int* n) { return static_cast<int>(cudaGetDeviceCount(n)); }
inline const char* error_name(int e) { return cudaGetErrorName(static_cast<cudaError_t>(e)); }
}  // namespace roster_test::detail
#else
extern "C" int cudaGetDeviceCount(int* count);
extern "C" const char* cudaGetErrorName(int error);
namespace roster_test::detail {
inline int device_count(int* n) { return cudaGetDeviceCount(n); }
inline const char* error_name(int e) { return cudaGetErrorName(e); }
}  // namespace roster_test::detail
#endif

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
  const char* name = code == cuda_success ? "cudaSuccess" : detail::error_name(code);
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
