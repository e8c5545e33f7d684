// User CUDA kernels through roster: host launchers compiled with nvcc
// (axpy_kernels.cu), called on the device's stream in order with built-in
// ops; two variants and a launcher whose launch fails. Without a visible
// device every test skips and says why.
#include <roster/acquire.hpp>
#include <roster/backends/cuda.hpp>
#include <roster/kernels.hpp>

#include <gtest/gtest.h>

#include "../support/cuda_gpu.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace {


// Runs on every host: the nvcc-compiled object registered its entries.
TEST(CudaKernels, LaunchersCompiledWithNvccAreRegistered) {
  auto plain = roster::find_kernel("axpy", "cuda", roster::element_type::f64);
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ((*plain)->variant, "plain");
  EXPECT_NE((*plain)->payload_as<roster::cuda::launcher>()->fn, nullptr);
  auto pairs = roster::find_kernel("axpy", "cuda", roster::element_type::f64, "pairs");
  ASSERT_TRUE(pairs) << pairs.error().message();
  EXPECT_NE((*pairs)->payload_as<roster::cuda::launcher>()->fn, (*plain)->payload_as<roster::cuda::launcher>()->fn);
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

// Runs on every host: the backend's built-in ops are inventory entries with
// no launcher of their own (dispatch runs them in the program's one launch).
TEST(CudaKernels, BuiltInOpsAreInventoryEntries) {
  for (std::size_t k = 0; k < roster::op_count; ++k) {
    const auto o = static_cast<roster::op>(k);
    for (auto type : {roster::element_type::f32, roster::element_type::f64}) {
      auto e = roster::find_kernel(roster::to_string(o), "cuda", type);
      ASSERT_TRUE(e) << roster::to_string(o) << ": " << e.error().message();
      EXPECT_EQ((*e)->variant, "builtin");
      EXPECT_TRUE((*e)->is_default);
      EXPECT_EQ((*e)->builtin, o);
      EXPECT_EQ((*e)->payload_as<roster::cuda::launcher>(), nullptr);
    }
  }
  EXPECT_TRUE(roster::check_kernels()) << roster::check_kernels().error().message();
}

// A program of calls of built-in ops: the steps' results in as many launches.
TEST(CudaKernels, CallsOfBuiltInOpsKeepTheOneLaunchPath) {
  ROSTER_TEST_NEED_GPU();
  auto d = roster::open_as<roster::cuda::backend>();
  ASSERT_TRUE(d) << d.error().message();
  roster::cuda::device& dev = **d;
  constexpr std::size_t n = (1 << 20) + 3;
  auto run = [&](bool as_calls, std::uint64_t& launches) {
    auto a = *dev.allocate<double>(n), b = *dev.allocate<double>(n), c = *dev.allocate<double>(n);
    auto r = *dev.allocate<double>(1);
    roster::program p;
    if (as_calls) {
      p.call("fill", {a}, {1.0}).call("fill", {b}, {2.0}).call("fill", {c}, {0.5});
      p.call("copy", {c, a}).call("mul", {b, c}, {3.0}).call("add", {c, a, b});
      p.call("triad", {a, b, c}, {0.25}).call("nstream", {a, b, c}, {2.0}).call("grid_sync", {});
      p.call("dot", {r, a, b});
    } else {
      p.fill(a, 1.0).fill(b, 2.0).fill(c, 0.5).copy(c, a).mul(b, c, 3.0).add(c, a, b);
      p.triad(a, b, c, 0.25).nstream(a, b, c, 2.0).grid_sync().dot(r, a, b);
    }
    const auto before = dev.launches();
    auto ok = dev.dispatch(p);
    EXPECT_TRUE(ok) << ok.error().message();
    EXPECT_TRUE(dev.synchronize());
    const auto after = dev.launches();
    launches = (after.plain + after.cooperative) - (before.plain + before.cooperative);
    std::vector<double> ha(n), hr(1);
    EXPECT_TRUE(dev.download(a, std::span<double>(ha)));
    EXPECT_TRUE(dev.download(r, std::span<double>(hr)));
    return std::pair<double, double>{ha[n - 1], hr[0]};
  };
  std::uint64_t step_launches = 0, call_launches = 0;
  const auto steps = run(false, step_launches);
  const auto calls = run(true, call_launches);
  EXPECT_EQ(steps.first, 15.0);
  EXPECT_EQ(calls.first, steps.first);
  EXPECT_EQ(calls.second, steps.second);
  EXPECT_EQ(call_launches, step_launches);
}

}  // namespace
