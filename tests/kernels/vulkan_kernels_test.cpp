// User kernels on the Vulkan backend (lavapipe in CI): GLSL compute shaders
// compiled to SPIR-V at build time, registered with roster::vulkan::kernel,
// called in one program with built-in ops, with the validation layer on.
#include <roster/acquire.hpp>
#include <roster/variants.hpp>
#include <roster/backends/vulkan.hpp>
#include <roster/kernels.hpp>

#include <gtest/gtest.h>

#include "../support/vulkan_validation.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "axpy_f32.spv.h"
#include "axpy_f64.spv.h"
#include "iota_f32.spv.h"

namespace {

constinit const roster::vulkan::shader axpy_f64_spv{roster_spv_axpy_f64, 64};
constinit const roster::vulkan::shader axpy_f32_spv{roster_spv_axpy_f32, 64};
constinit const roster::vulkan::shader iota_f32_spv{roster_spv_iota_f32, 32};
constinit const roster::kernel_entry axpy_f64 =
    roster::vulkan::kernel<roster::read_write<double>, roster::read<double>, roster::scalar<double>>(
        "axpy", "plain", roster::default_variant, &axpy_f64_spv);
constinit const roster::kernel_entry axpy_f32 =
    roster::vulkan::kernel<roster::read_write<float>, roster::read<float>, roster::scalar<float>>(
        "axpy", "plain", roster::default_variant, &axpy_f32_spv);
constinit const roster::kernel_entry iota_f32 =
    roster::vulkan::kernel<roster::write<float, roster::length::any>, roster::scalar<std::int32_t>,
                           roster::scalar<float>>("iota", "plain", roster::default_variant, &iota_f32_spv);
ROSTER_KERNEL(axpy_f64);
ROSTER_KERNEL(axpy_f32);
ROSTER_KERNEL(iota_f32);


std::unique_ptr<roster::device> open_vulkan() {
  auto d = roster::acquire("vulkan:0");
  if (!d) return nullptr;
  return std::move(*d);
}
#define ROSTER_TEST_NEED_VULKAN(dev)                                                      \
  auto dev = open_vulkan();                                                               \
  if (!dev) GTEST_SKIP() << "no Vulkan adapter here (no loader or driver)";             \
  static_assert(true, "")

TEST(VulkanKernels, CallsRunInOrderWithBuiltInOps) {
  ROSTER_TEST_NEED_VULKAN(dev);
  if (!dev->caps().f64) GTEST_SKIP() << "the adapter has no double support";
  constexpr std::size_t n = 10007;  // not a multiple of the local size
  auto y = dev->allocate<double>(n), x = dev->allocate<double>(n), z = dev->allocate<double>(n);
  auto r = dev->allocate<double>(1);
  ASSERT_TRUE(y && x && z && r);
  roster::program p;
  p.fill(*x, 2.0)
      .fill(*y, 1.0)
      .call("axpy", {*y, *x}, {3.0})  // y = 7
      .triad(*z, *y, *x, 0.5)         // z = 8
      .call("axpy", {*z, *y}, {2.0})  // z = 22
      .grid_sync()
      .dot(*r, *z, *x);               // r = 44 n
  auto ok = dev->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_TRUE(dev->synchronize());
  std::vector<double> hy(n), hz(n), hr(1);
  ASSERT_TRUE(dev->download(*y, std::span<double>(hy)));
  ASSERT_TRUE(dev->download(*z, std::span<double>(hz)));
  ASSERT_TRUE(dev->download(*r, std::span<double>(hr)));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(hy[i], 7.0) << i;
    ASSERT_EQ(hz[i], 22.0) << i;
  }
  EXPECT_EQ(hr[0], 44.0 * n);
  // Again: the cached pipeline, a fresh descriptor set.
  ASSERT_TRUE(dev->dispatch(p));
  ASSERT_TRUE(dev->download(*y, std::span<double>(hy)));
  EXPECT_EQ(hy[0], 7.0);
}

TEST(VulkanKernels, FloatKernelWithIntAndFloatScalarsAndAnExtent) {
  ROSTER_TEST_NEED_VULKAN(dev);
  auto a = dev->allocate<float>(100), y = dev->allocate<float>(100);
  ASSERT_TRUE(a && y);
  roster::program p;
  p.fill(*a, -1.0)
      .call("iota", {*a}, {std::int32_t{-5}, 0.5}, {.extent = 70})  // a[i] = (i - 5) / 2 below 70
      .fill(*y, 1.0)
      .call("axpy", {*y, *a}, {2.0});                                // y = 1 + 2 a
  auto ok = dev->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  std::vector<float> ha(100), hy(100);
  ASSERT_TRUE(dev->download(*a, std::span<float>(ha)));
  ASSERT_TRUE(dev->download(*y, std::span<float>(hy)));
  for (std::size_t i = 0; i < 100; ++i) {
    const float want = i < 70 ? 0.5f * static_cast<float>(static_cast<int>(i) - 5) : -1.0f;
    ASSERT_EQ(ha[i], want) << i;
    ASSERT_EQ(hy[i], 1.0f + 2.0f * want) << i;
  }
}

TEST(VulkanKernels, AKernelWithoutAVulkanEntryIsRefused) {
  ROSTER_TEST_NEED_VULKAN(dev);
  auto a = dev->allocate<float>(16);
  ASSERT_TRUE(a);
  roster::program p;
  p.call("cpu_only", {*a});
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().message().find("no kernel for op 'cpu_only' over float on backend 'vulkan'"),
            std::string::npos)
      << ok.error().message();
  EXPECT_NE(ok.error().fix().find("(cpu)"), std::string::npos) << ok.error().message();
}

// Run with ROSTER_VULKAN_MAX_RANGE=4096 (meson test kernels_vulkan_range):
// a buffer beyond one descriptor's range is an error, not a partial run.
TEST(VulkanKernels, DescriptorRangeBeyondTheLimitIsRefused) {
  ROSTER_TEST_NEED_VULKAN(dev);
  const char* cap = std::getenv("ROSTER_VULKAN_MAX_RANGE");
  ASSERT_TRUE(cap != nullptr && std::string(cap) == "4096") << "run through meson test kernels_vulkan_range";
  auto small = dev->allocate<float>(1024), large = dev->allocate<float>(1025);
  ASSERT_TRUE(small && large);
  roster::program fits;
  fits.call("iota", {*small}, {std::int32_t{0}, 1.0f}, {.extent = 1024});
  auto ok = dev->dispatch(fits);
  ASSERT_TRUE(ok) << ok.error().message();
  roster::program beyond;
  beyond.call("iota", {*large}, {std::int32_t{0}, 1.0f}, {.extent = 8});
  ok = dev->dispatch(beyond);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::unsupported);
  EXPECT_NE(ok.error().message().find("kernel 'iota': a buffer of 4100 bytes is beyond one descriptor's range (4096)"),
            std::string::npos)
      << ok.error().message();
  // The device still runs the next program.
  std::vector<float> h(1024);
  ASSERT_TRUE(dev->download(*small, std::span<float>(h)));
  EXPECT_EQ(h[1023], 1023.0f);
}

// Variants and measured choice on Vulkan: a second variant of the float axpy
// (the same shader), both timed and checked against a host reference.
constinit const roster::kernel_entry axpy_f32_again =
    roster::vulkan::kernel<roster::read_write<float>, roster::read<float>, roster::scalar<float>>(
        "axpy", "again", roster::other_variant, &axpy_f32_spv);
ROSTER_KERNEL(axpy_f32_again);
void axpy_host(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  float* y = a.data<float>(0);
  const float* x = a.data<const float>(1);
  for (std::size_t i = begin; i < end; ++i) y[i] += a.scalar<float>(0) * x[i];
}

TEST(VulkanKernels, TuneKernelTimesAndChecksEachVariant) {
  ROSTER_TEST_NEED_VULKAN(dev);
  auto t = roster::tune_kernel(*dev, "axpy", roster::element_type::f32, 1000,
                               roster::tune_options{.reps = 3, .reference = &axpy_host});
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->variants.size(), 2u);
  for (const auto& v : t->variants) {
    EXPECT_FALSE(v.wrong) << v.wrong->message();
    EXPECT_EQ(v.ns.size(), 3u);
  }
  EXPECT_EQ(t->choice.baseline, "plain");
  EXPECT_EQ(t->choice.size_class, 9u);
  // The recorded choice runs when a call names no variant, here as anywhere.
  const roster::kernel_choice again{"axpy", roster::element_type::f32, 9, "again", "plain", 1.0, 2.0, 0.0};
  dev->use_kernel_choices(std::span(&again, 1));
  auto y = dev->allocate<float>(1000), x = dev->allocate<float>(1000);
  ASSERT_TRUE(y && x);
  roster::program p;
  p.call("axpy", {*y, *x}, {2.0f});
  auto k = dev->kernel_for(*p.steps().front().call);
  ASSERT_TRUE(k) << k.error().message();
  EXPECT_EQ((*k)->variant, "again");
  ASSERT_TRUE(dev->dispatch(p));
}

void cpu_only(const roster::kernel_args&, std::size_t, std::size_t) {}
constinit const roster::kernel_entry cpu_only_entry =
    roster::kernel_entry_of<roster::write<float>>("cpu_only", "cpu", "plain", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&cpu_only>));
ROSTER_KERNEL(cpu_only_entry);

// The backend's built-in ops are inventory entries with no SPIR-V of their
// own: a call of one runs the built-in shaders in the program's submission.
TEST(VulkanKernels, BuiltInOpsAreInventoryEntries) {
  for (std::size_t k = 0; k < roster::op_count; ++k) {
    const auto o = static_cast<roster::op>(k);
    for (auto type : {roster::element_type::f32, roster::element_type::f64}) {
      auto e = roster::find_kernel(roster::to_string(o), "vulkan", type);
      ASSERT_TRUE(e) << roster::to_string(o) << ": " << e.error().message();
      EXPECT_EQ((*e)->variant, "builtin");
      EXPECT_TRUE((*e)->is_default);
      EXPECT_EQ((*e)->builtin, o);
      EXPECT_EQ((*e)->payload_as<roster::vulkan::shader>(), nullptr);
    }
  }
  EXPECT_TRUE(roster::check_kernels()) << roster::check_kernels().error().message();
}

TEST(VulkanKernels, CallsOfBuiltInOpsGiveTheStepsResults) {
  ROSTER_TEST_NEED_VULKAN(dev);
  constexpr std::size_t n = 10007;
  auto run = [&](bool as_calls) {
    auto a = *dev->allocate<float>(n), b = *dev->allocate<float>(n), c = *dev->allocate<float>(n);
    auto r = *dev->allocate<float>(1);
    roster::program p;
    if (as_calls) {
      p.call("fill", {a}, {1.0f}).call("fill", {b}, {2.0f}).call("fill", {c}, {0.5f});
      p.call("copy", {c, a}).call("mul", {b, c}, {3.0f}).call("add", {c, a, b});
      p.call("triad", {a, b, c}, {0.25f}).call("nstream", {a, b, c}, {2.0f}).call("grid_sync", {});
      p.call("dot", {r, a, b});
    } else {
      p.fill(a, 1.0).fill(b, 2.0).fill(c, 0.5).copy(c, a).mul(b, c, 3.0).add(c, a, b);
      p.triad(a, b, c, 0.25).nstream(a, b, c, 2.0).grid_sync().dot(r, a, b);
    }
    auto ok = dev->dispatch(p);
    EXPECT_TRUE(ok) << ok.error().message();
    EXPECT_TRUE(dev->synchronize());
    std::vector<float> ha(n), hr(1);
    EXPECT_TRUE(dev->download(a, std::span<float>(ha)));
    EXPECT_TRUE(dev->download(r, std::span<float>(hr)));
    return std::pair<float, float>{ha[n - 1], hr[0]};
  };
  const auto steps = run(false);
  const auto calls = run(true);
  EXPECT_EQ(steps.first, 15.0f);
  EXPECT_EQ(calls.first, steps.first);
  EXPECT_EQ(calls.second, steps.second);
  EXPECT_FLOAT_EQ(calls.second, 45.0f * n);
  // A user variant named on Vulkan where none is registered: the user kernel's error.
  auto a = *dev->allocate<float>(n);
  roster::program named;
  named.call("fill", {a}, {1.0f}, {.variant = "user"});
  auto refused = dev->dispatch(named);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("no variant 'user' of op 'fill' over float on backend 'vulkan'"),
            std::string::npos)
      << refused.error().message();
  EXPECT_FALSE(refused.error().fix().empty());
}

// A call of a built-in op over another element type than the program's
// built-in steps is not folded into them: it is recorded as its built-in
// step on its own, in the same submission.
TEST(VulkanKernels, ABuiltInCallOfAnotherTypeRunsOnItsOwn) {
  ROSTER_TEST_NEED_VULKAN(dev);
  if (!dev->caps().f64) GTEST_SKIP() << "the adapter has no double support";
  constexpr std::size_t n = 4099;
  auto fa = *dev->allocate<float>(n);
  auto da = *dev->allocate<double>(n), db = *dev->allocate<double>(n), r = *dev->allocate<double>(1);
  roster::program p;
  p.fill(fa, 1.0)
      .call("fill", {db}, {2.0})
      .call("triad", {da, db, db}, {0.5})  // 2 + 0.5 * 2 = 3
      .grid_sync()
      .call("dot", {r, da, db});  // 6 n
  auto ok = dev->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_TRUE(dev->synchronize());
  std::vector<double> h(n), hr(1);
  std::vector<float> hf(n);
  ASSERT_TRUE(dev->download(da, std::span<double>(h)));
  ASSERT_TRUE(dev->download(r, std::span<double>(hr)));
  ASSERT_TRUE(dev->download(fa, std::span<float>(hf)));
  EXPECT_EQ(h[0], 3.0);
  EXPECT_EQ(h[n - 1], 3.0);
  EXPECT_EQ(hf[n - 1], 1.0f);
  EXPECT_EQ(hr[0], 6.0 * n);
}

}  // namespace
