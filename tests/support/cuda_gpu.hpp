#pragma once
// For CUDA test binaries: whether a device is visible, the skip that says
// where the tests run instead, and the CUDA device behind acquire's wrapper.

#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>

#include <gtest/gtest.h>

namespace roster_test {

inline bool have_cuda_device() {
  auto list = roster::cuda::backend::enumerate();
  return list && !list->empty();
}

// The CUDA device itself, whether acquire wrapped it in a grid-sync split or not.
inline roster::cuda::device& cuda_of(roster::device& d) {
  if (auto* split = dynamic_cast<roster::grid_sync_split<roster::device>*>(&d))
    return dynamic_cast<roster::cuda::device&>(split->inner());
  return dynamic_cast<roster::cuda::device&>(d);
}

}  // namespace roster_test

#define ROSTER_TEST_NEED_GPU()                                                                             \
  if (!::roster_test::have_cuda_device())                                                                  \
  GTEST_SKIP() << "no CUDA device visible (no driver, or CUDA_VISIBLE_DEVICES hides them); these tests run " \
                  "on a GPU node: scripts/gpu-check"
