// The Vulkan backend on whatever Vulkan device the host has (lavapipe in CI):
// registration, adapters, every op for both element types against a host
// reference, programs with grid syncs, timing, error paths, and a clean
// validation layer at the end.
#include <roster/acquire.hpp>
#include <roster/backends/vulkan.hpp>

#include <roster/native.hpp>

#include <gtest/gtest.h>

#include "../support/vulkan_validation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

using roster::element_type;
using roster::op;

// Fails the run when the validation layer reported anything, and checks that
// it was on when the test environment asked for it.

std::unique_ptr<roster::device> open_vulkan() {
  auto d = roster::acquire("vulkan:0");
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : nullptr;
}

TEST(vulkan_backend, registers_with_rank_20_and_dispatches) {
  const auto* reg = roster::find_backend("vulkan");
  ASSERT_NE(reg, nullptr);
  EXPECT_EQ(reg->ops, roster::op_set::all());
  bool seen = false;
  for (const auto& b : roster::registered_backends())
    if (b.id() == "vulkan") {
      seen = true;
      EXPECT_EQ(b.rank, 20);
      EXPECT_TRUE(b.dispatches);
    }
  EXPECT_TRUE(seen);
}

TEST(vulkan_backend, enumerates_adapters_with_identity) {
  auto adapters = roster::vulkan::backend::enumerate();
  ASSERT_TRUE(adapters) << adapters.error().message();
  ASSERT_FALSE(adapters->empty()) << "no Vulkan adapter: is mesa-vulkan-drivers (lavapipe) installed?";
  for (std::size_t i = 0; i < adapters->size(); ++i) {
    const auto& a = (*adapters)[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.backend, "vulkan");
    EXPECT_EQ(a.ordinal, i);
    EXPECT_FALSE(a.name.empty());
    EXPECT_TRUE(a.has_uuid());
    EXPECT_NE(a.vendor_id, 0u);
    EXPECT_GT(a.memory_bytes, 0u);
    EXPECT_FALSE(a.driver_version.empty());
    EXPECT_FALSE(a.native_grid_sync);
    EXPECT_EQ(a.ops, roster::op_set::all());
    if (!a.pci_address.empty()) {
      EXPECT_EQ(a.pci_address.size(), 12u) << a.pci_address;  // 0000:00:07.0
    }
  }
}

TEST(vulkan_backend, lavapipe_is_a_cpu_adapter_with_f64) {
  auto adapters = roster::vulkan::backend::enumerate();
  ASSERT_TRUE(adapters);
  for (const auto& a : *adapters)
    if (a.name.find("llvmpipe") != std::string::npos) {
      EXPECT_EQ(a.type, roster::device_type::cpu);
      EXPECT_TRUE(a.f64);
      EXPECT_NE(a.driver_version.find("Mesa"), std::string::npos) << a.driver_version;
      EXPECT_GT(a.compute_units, 0u);
      return;
    }
  GTEST_SKIP() << "no lavapipe adapter here";
}

TEST(vulkan_backend, acquire_applies_the_grid_sync_split) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->caps().native_grid_sync);
  EXPECT_EQ(d->adapter().spec(), "vulkan:0");
  auto adapters = roster::vulkan::backend::enumerate();
  ASSERT_TRUE(adapters);
  EXPECT_EQ(d->adapter().uuid, adapters->front().uuid);
}

// The pipelines are made at open from the committed SPIR-V: roster::kernels_loaded
// says how long that took and how many (15 per element type), through the
// grid-sync split that acquire wraps the device in.
TEST(vulkan_backend, kernels_loaded_says_the_pipelines_made_at_open) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  auto load = roster::kernels_loaded(*d);
  ASSERT_TRUE(load) << load.error().message();
  ASSERT_TRUE(load->has_value());
  EXPECT_GT((*load)->ns, 0);
  const std::string want = "vkCreateComputePipelines: " + std::to_string(d->caps().f64 ? 30 : 15) + " pipelines";
  EXPECT_NE((*load)->how.find(want), std::string::npos) << (*load)->how;
}

TEST(vulkan_backend, unknown_ordinal_is_a_clear_error) {
  auto d = roster::acquire("vulkan:99");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::not_found);
  EXPECT_NE(d.error().what().find("vulkan:99"), std::string_view::npos) << d.error().message();
  EXPECT_FALSE(d.error().fix().empty());
}

// ---------------------------------------------------------------------------
// Every op against a host reference.

struct op_case {
  element_type type;
  std::size_t n;
};

class vulkan_ops : public ::testing::TestWithParam<op_case> {};

template <class T>
void run_every_op(roster::device& d, std::size_t n) {
  const T tol = std::is_same_v<T, float> ? T(1e-5) : T(1e-12);
  auto near = [&](T got, T want) { return std::fabs(got - want) <= tol * std::max(T(1), std::fabs(want)); };
  auto a = d.allocate<T>(n), b = d.allocate<T>(n), c = d.allocate<T>(n), r = d.allocate<T>(1);
  ASSERT_TRUE(a && b && c && r);
  std::vector<T> ha(n), hb(n), hc(n);
  for (std::size_t i = 0; i < n; ++i) {
    ha[i] = T(0.5) + T(i % 97) * T(0.25);
    hb[i] = T(1.5) - T(i % 13) * T(0.125);
    hc[i] = T(i % 7);
  }
  ASSERT_TRUE(d.upload(*a, std::span<const T>(ha)));
  ASSERT_TRUE(d.upload(*b, std::span<const T>(hb)));
  ASSERT_TRUE(d.upload(*c, std::span<const T>(hc)));

  auto check = [&](const roster::buffer& buf, const std::vector<T>& want, const char* what) {
    std::vector<T> got(want.size());
    auto ok = d.download(buf, std::span<T>(got));
    ASSERT_TRUE(ok) << ok.error().message();
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_TRUE(near(got[i], want[i])) << what << " at " << i << ": " << got[i] << " != " << want[i];
  };
  auto run = [&](const roster::program& p) {
    auto ok = d.dispatch(p);
    ASSERT_TRUE(ok) << ok.error().message();
  };

  const T s = T(0.375);
  // copy: c = a
  run(roster::program().copy(*c, *a));
  hc = ha;
  check(*c, hc, "copy");
  // mul: b = s c
  run(roster::program().mul(*b, *c, s));
  for (std::size_t i = 0; i < n; ++i) hb[i] = s * hc[i];
  check(*b, hb, "mul");
  // add: c = a + b
  run(roster::program().add(*c, *a, *b));
  for (std::size_t i = 0; i < n; ++i) hc[i] = ha[i] + hb[i];
  check(*c, hc, "add");
  // triad: a = b + s c
  run(roster::program().triad(*a, *b, *c, s));
  for (std::size_t i = 0; i < n; ++i) ha[i] = hb[i] + s * hc[i];
  check(*a, ha, "triad");
  // nstream: a += b + s c
  run(roster::program().nstream(*a, *b, *c, s));
  for (std::size_t i = 0; i < n; ++i) ha[i] += hb[i] + s * hc[i];
  check(*a, ha, "nstream");
  // dot: r = sum a b
  run(roster::program().dot(*r, *a, *b));
  double want = 0;
  for (std::size_t i = 0; i < n; ++i) want += double(ha[i]) * double(hb[i]);
  std::vector<T> got(1);
  ASSERT_TRUE(d.download(*r, std::span<T>(got)));
  const double dot_tol = std::is_same_v<T, float> ? 1e-4 : 1e-11;
  EXPECT_NEAR(double(got[0]), want, dot_tol * std::max(1.0, std::fabs(want))) << "dot";
  // fill: a = x
  run(roster::program().fill(*a, T(-2.5)));
  std::fill(ha.begin(), ha.end(), T(-2.5));
  check(*a, ha, "fill");

  for (auto* x : {&*a, &*b, &*c, &*r}) ASSERT_TRUE(d.release(*x));
}

TEST_P(vulkan_ops, every_op_matches_the_host) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  const auto [type, n] = GetParam();
  if (type == element_type::f64) run_every_op<double>(*d, n);
  else run_every_op<float>(*d, n);
}

INSTANTIATE_TEST_SUITE_P(sizes, vulkan_ops,
                         ::testing::Values(op_case{element_type::f32, 1}, op_case{element_type::f32, 255},
                                           op_case{element_type::f32, 4099}, op_case{element_type::f32, 600001},
                                           op_case{element_type::f64, 1}, op_case{element_type::f64, 257},
                                           op_case{element_type::f64, 4099}, op_case{element_type::f64, 600001}),
                         [](const auto& info) {
                           return std::string(roster::to_string(info.param.type)) + "_" +
                                  std::to_string(info.param.n);
                         });

// ---------------------------------------------------------------------------
// Programs of several steps: each step sees the ones before it, within a piece
// (barriers) and across grid syncs (the split wrapper).

TEST(vulkan_backend, steps_in_one_piece_see_each_other) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  const std::size_t n = 10007;
  auto a = d->allocate<double>(n), b = d->allocate<double>(n), c = d->allocate<double>(n);
  auto r1 = d->allocate<double>(1), r2 = d->allocate<double>(3);
  ASSERT_TRUE(a && b && c && r1 && r2);
  roster::program p;
  p.fill(*a, 1.0).fill(*b, 2.0).fill(*c, 0.0).copy(*c, *a).mul(*b, *c, 3.0).add(*c, *a, *b)  // c = 4
      .triad(*a, *b, *c, 0.5)                                                                  // a = 5
      .dot(*r1, *a, *c)                                                                         // 20 n
      .nstream(*a, *b, *c, 1.0)                                                                 // a = 12
      .dot(*r2, *a, *a);                                                                        // 144 n
  auto ok = d->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  std::vector<double> x(1), y(3);
  ASSERT_TRUE(d->download(*r1, std::span<double>(x)));
  ASSERT_TRUE(d->download(*r2, std::span<double>(y)));
  EXPECT_DOUBLE_EQ(x[0], 20.0 * n);
  EXPECT_DOUBLE_EQ(y[0], 144.0 * n);
}

TEST(vulkan_backend, grid_syncs_split_the_program) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  const std::size_t n = 3001;
  auto a = d->allocate<float>(n), b = d->allocate<float>(n), r = d->allocate<float>(1);
  ASSERT_TRUE(a && b && r);
  roster::program p;
  p.fill(*a, 2.0).grid_sync().fill(*b, 0.5).grid_sync().dot(*r, *a, *b).grid_sync().grid_sync().mul(*a, *a, 4.0);
  auto ok = d->dispatch(p);
  ASSERT_TRUE(ok) << ok.error().message();
  std::vector<float> hr(1), ha(n);
  ASSERT_TRUE(d->download(*r, std::span<float>(hr)));
  ASSERT_TRUE(d->download(*a, std::span<float>(ha)));
  EXPECT_FLOAT_EQ(hr[0], float(n));
  for (float v : ha) ASSERT_EQ(v, 8.0f);
}

TEST(vulkan_backend, dot_may_write_into_one_of_its_inputs) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  const std::size_t n = 5000;
  auto a = d->allocate<double>(n);
  ASSERT_TRUE(a);
  auto ok = d->dispatch(roster::program().fill(*a, 2.0).dot(*a, *a, *a));
  ASSERT_TRUE(ok) << ok.error().message();
  std::vector<double> h(n);
  ASSERT_TRUE(d->download(*a, std::span<double>(h)));
  EXPECT_DOUBLE_EQ(h[0], 4.0 * n);
  EXPECT_DOUBLE_EQ(h[1], 2.0);
}

TEST(vulkan_backend, many_dispatches_in_flight_then_synchronize) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  const std::size_t n = 2048;
  auto a = d->allocate<float>(n);
  ASSERT_TRUE(a);
  ASSERT_TRUE(d->dispatch(roster::program().fill(*a, 0.0)));
  roster::program inc;
  auto one = d->allocate<float>(n);
  ASSERT_TRUE(one);
  ASSERT_TRUE(d->dispatch(roster::program().fill(*one, 1.0)));
  inc.add(*a, *a, *one);
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(d->dispatch(inc));  // more than the in-flight ring holds
  ASSERT_TRUE(d->synchronize());
  std::vector<float> h(n);
  ASSERT_TRUE(d->download(*a, std::span<float>(h)));
  for (float v : h) ASSERT_EQ(v, 40.0f);
}

TEST(vulkan_backend, timed_dispatch_uses_timestamps) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  const std::size_t n = 1 << 20;
  auto a = d->allocate<float>(n), b = d->allocate<float>(n);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(d->dispatch(roster::program().fill(*b, 1.0)));
  const auto t0 = std::chrono::steady_clock::now();
  auto t = d->timed_dispatch(roster::program().copy(*a, *b));
  const auto wall = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_GT(t->count(), 0);
  EXPECT_LE(*t, wall);
  std::vector<float> h(n);
  ASSERT_TRUE(d->download(*a, std::span<float>(h)));
  EXPECT_EQ(h[n - 1], 1.0f);
}

TEST(vulkan_backend, released_buffer_is_refused) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  auto a = d->allocate<float>(16);
  ASSERT_TRUE(a);
  ASSERT_TRUE(d->release(*a));
  auto again = d->allocate<float>(16);
  ASSERT_TRUE(again);
  auto ok = d->dispatch(roster::program().fill(*a, 1.0));
  ASSERT_FALSE(ok);
  EXPECT_FALSE(ok.error().fix().empty());
}

TEST(vulkan_backend, upload_larger_than_the_staging_buffer) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  const std::size_t n = (80u << 20) / sizeof(double);  // 80 MiB > 64 MiB staging
  auto a = d->allocate<double>(n);
  ASSERT_TRUE(a);
  std::vector<double> h(n);
  std::iota(h.begin(), h.end(), 0.0);
  ASSERT_TRUE(d->upload(*a, std::span<const double>(h)));
  std::vector<double> back(n, -1.0);
  ASSERT_TRUE(d->download(*a, std::span<double>(back)));
  EXPECT_EQ(back, h);
}

}  // namespace
