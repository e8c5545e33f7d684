// User CUDA kernels through roster: host launchers compiled with nvcc
// (axpy_kernels.cu), called on the device's stream in order with built-in
// ops; two variants and a launcher whose launch fails. Without a visible
// device every test skips and says why.
#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>
#include <roster/kernels.hpp>

#include <gtest/gtest.h>

#include "../support/cuda_gpu.hpp"

#include <string>
#include <vector>

namespace {


// Runs on every host: the nvcc-compiled object registered its entries.
TEST(CudaKernels, LaunchersCompiledWithNvccAreRegistered) {
  auto plain = roster::find_kernel("axpy", "cuda", roster::element_type::f64);
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ((*plain)->variant, "plain");
  EXPECT_NE((*plain)->cuda, nullptr);
  auto pairs = roster::find_kernel("axpy", "cuda", roster::element_type::f64, "pairs");
  ASSERT_TRUE(pairs) << pairs.error().message();
  EXPECT_NE((*pairs)->cuda, (*plain)->cuda);
  EXPECT_TRUE(roster::find_kernel("axpy", "cuda", roster::element_type::f32));
  EXPECT_TRUE(roster::check_kernels()) << roster::check_kernels().error().message();
}

TEST(CudaKernels, CallsRunInOrderWithBuiltInOps) {
  ROSTER_TEST_NEED_GPU();
  for (const char* variant : {"", "plain", "pairs"}) {
    SCOPED_TRACE(variant);
    auto dev = roster::acquire("cuda:0");
    ASSERT_TRUE(dev) << dev.error().message();
    constexpr std::size_t n = (1 << 20) + 3;
    auto y = (*dev)->allocate<double>(n), x = (*dev)->allocate<double>(n), z = (*dev)->allocate<double>(n);
    auto r = (*dev)->allocate<double>(1);
    ASSERT_TRUE(y && x && z && r);
    roster::program p;
    p.fill(*x, 2.0)
        .fill(*y, 1.0)
        .call("axpy", {*y, *x}, {3.0}, {.variant = variant})  // y = 7
        .triad(*z, *y, *x, 0.5)                               // z = 8
        .call("axpy", {*z, *y}, {2.0}, {.variant = variant})  // z = 22
        .grid_sync()
        .dot(*r, *z, *x);                                     // r = 44 n
    auto ok = (*dev)->dispatch(p);
    ASSERT_TRUE(ok) << ok.error().message();
    ASSERT_TRUE((*dev)->synchronize());
    std::vector<double> hy(n), hz(n), hr(1);
    ASSERT_TRUE((*dev)->download(*y, std::span<double>(hy)));
    ASSERT_TRUE((*dev)->download(*z, std::span<double>(hz)));
    ASSERT_TRUE((*dev)->download(*r, std::span<double>(hr)));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(hy[i], 7.0) << i;
      ASSERT_EQ(hz[i], 22.0) << i;
    }
    EXPECT_EQ(hr[0], 44.0 * n);
  }
}

TEST(CudaKernels, FloatInstance) {
  ROSTER_TEST_NEED_GPU();
  auto dev = roster::acquire("cuda:0");
  ASSERT_TRUE(dev) << dev.error().message();
  auto y = (*dev)->allocate<float>(1000), x = (*dev)->allocate<float>(1000);
  ASSERT_TRUE(y && x);
  roster::program p;
  p.fill(*x, 1.5).fill(*y, 0.25).call("axpy", {*y, *x}, {2.0});
  ASSERT_TRUE((*dev)->dispatch(p));
  std::vector<float> hy(1000);
  ASSERT_TRUE((*dev)->download(*y, std::span<float>(hy)));
  for (float v : hy) ASSERT_EQ(v, 3.25f);
}

TEST(CudaKernels, AFailedLaunchIsAnErrorNamingTheKernel) {
  ROSTER_TEST_NEED_GPU();
  auto dev = roster::acquire("cuda:0");
  ASSERT_TRUE(dev) << dev.error().message();
  auto y = (*dev)->allocate<double>(64), x = (*dev)->allocate<double>(64);
  ASSERT_TRUE(y && x);
  roster::program p;
  p.call("axpy", {*y, *x}, {1.0}, {.variant = "broken"});
  auto ok = (*dev)->dispatch(p);
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().message().find("the launcher of kernel 'axpy' (variant 'broken')"), std::string::npos)
      << ok.error().message();
  // A block of 4,096 threads: CUDA 12 says invalid configuration, CUDA 13 invalid value.
  const std::string m = ok.error().message();
  EXPECT_TRUE(m.find("cudaErrorInvalidConfiguration") != std::string::npos ||
              m.find("cudaErrorInvalidValue") != std::string::npos)
      << m;
  EXPECT_NE(m.find("check the launcher's grid and block sizes"), std::string::npos) << m;
  EXPECT_EQ(m.find("restart the process"), std::string::npos) << m;
  // The device still works.
  roster::program good;
  good.fill(*y, 1.0).fill(*x, 1.0).call("axpy", {*y, *x}, {1.0});
  ASSERT_TRUE((*dev)->dispatch(good));
  std::vector<double> hy(64);
  ASSERT_TRUE((*dev)->download(*y, std::span<double>(hy)));
  EXPECT_EQ(hy[63], 2.0);
}

}  // namespace
