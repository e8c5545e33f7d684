// The CUDA backend where no device is usable: CI (no GPU, no driver) and a
// GPU node run with CUDA_VISIBLE_DEVICES=-1 (meson.build sets it). Nothing may
// abort; every failure says what is missing, with a Fix: part
// (cuda_driver_test.cpp has each case).

#include <roster/acquire.hpp>
#include <roster/decide.hpp>
#include <roster/backends/cuda.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(CudaNoDevice, RegistersWithRankTenAndDispatches) {
  bool found = false;
  for (const auto& b : roster::registered_backends()) {
    if (b.id() != "cuda") continue;
    found = true;
    EXPECT_EQ(b.rank, 10);
    EXPECT_TRUE(b.dispatches);
    EXPECT_TRUE(b.registration->ops.contains(roster::op_set::all()));
  }
  EXPECT_TRUE(found) << "the cuda backend is not in the inventory: " << roster::known_backends();
}

TEST(CudaNoDevice, EnumerateReturnsAnEmptyList) {
  const auto* reg = roster::find_backend("cuda");
  ASSERT_NE(reg, nullptr);
  auto list = roster::enumerate_adapters(*reg);
  ASSERT_TRUE(list) << list.error().message();
  EXPECT_TRUE(list->empty());
}

// What this machine lacks, said once: no NVIDIA GPU at all (CI), a GPU
// without a driver, or (a GPU node) none visible through the mask.
bool says_what_is_missing(std::string_view what) {
  return what == "cuda: no NVIDIA GPU on this machine" ||
         what.starts_with("cuda: no NVIDIA driver on this machine: ") ||
         what.starts_with("cuda: no CUDA device is visible (CUDA_VISIBLE_DEVICES='-1')");
}

TEST(CudaNoDevice, AcquireSaysWhatIsMissingWithAFix) {
  auto d = roster::acquire("cuda:0");
  ASSERT_FALSE(d);
  const auto& e = d.error();
  EXPECT_EQ(e.code(), roster::errc::unavailable) << e.message();
  EXPECT_TRUE(says_what_is_missing(e.what())) << e.message();
  // The runtime's "driver version is insufficient" misleads where there is no driver at all.
  if (!e.what().starts_with("cuda: no CUDA device")) {
    EXPECT_EQ(e.message().find("insufficient"), std::string::npos) << e.message();
  }
  EXPECT_NE(e.fix().find("ROSTER_DEVICE_SELECTOR='!cuda:*'"), std::string_view::npos) << e.message();
  auto again = roster::acquire("CUDA:3");
  ASSERT_FALSE(again) << "any ordinal fails the same way";
  EXPECT_EQ(again.error().what(), e.what());
}

TEST(CudaNoDevice, RouterNeverChoosesCuda) {
  // Without a CUDA device the backend lists no adapter: the decision, which
  // chooses among adapters, never weighs it.
  const roster::buffer a{1, 0, roster::element_type::f64, 16}, b{1, 1, roster::element_type::f64, 16};
  roster::program p;
  p.copy(a, b);
  auto routed = roster::acquire_preferred(p);
  ASSERT_TRUE(routed) << routed.error().message();  // the CPU backend is linked here
  EXPECT_NE(routed->backend, "cuda");
  for (const auto& x : routed->decision.passed) EXPECT_NE(x.spec.rfind("cuda:", 0), 0u) << x.spec << ": " << x.reason;
}

TEST(CudaNoDevice, ErrorsNameTheCodeAndMapItsCategory) {
  // Driver codes (CUresult), named by libcuda.so.1 where it loads, else by roster.
  auto e = roster::cuda::make_cuda_error(100, "cuda: no usable device", "install the driver");
  EXPECT_EQ(e.code(), roster::errc::unavailable);
  EXPECT_NE(e.message().find("(CUDA_ERROR_NO_DEVICE, 100)"), std::string::npos) << e.message();
  EXPECT_EQ(e.fix(), "install the driver");

  auto oom = roster::cuda::make_cuda_error(2, "cuda:0: allocate", "allocate less");
  EXPECT_EQ(oom.code(), roster::errc::out_of_memory);
  EXPECT_NE(oom.message().find("(CUDA_ERROR_OUT_OF_MEMORY, 2)"), std::string::npos) << oom.message();

  auto fault = roster::cuda::make_cuda_error(700, "cuda:0: dispatch", "restart");
  EXPECT_EQ(fault.code(), roster::errc::device_fault);
  EXPECT_NE(fault.message().find("(CUDA_ERROR_ILLEGAL_ADDRESS, 700)"), std::string::npos) << fault.message();
}

}  // namespace
