// Header-only consumer: roster's headers and the CPU backend's headers, built
// with ROSTER_HEADER_ONLY and no roster library linked. A static registry
// holding the CPU backend runs every STREAM op through static dispatch.

#if !defined(ROSTER_HEADER_ONLY)
#  error "this test must be built with -DROSTER_HEADER_ONLY"
#endif

#include <roster/backends/cpu.hpp>
#include <roster/static_registry.hpp>

#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

// The CPU header registers itself already; the bridge macro on top is harmless.
ROSTER_REGISTER_STATIC_BACKEND(roster::cpu::backend);

namespace {
using registry = roster::static_registry<roster::cpu::backend>;
}

TEST(StaticHeaderOnly, BothViewsListTheCpuBackendOnce) {
  const auto entries = roster::registered_backends();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].id(), registry::ids()[0]);
  EXPECT_EQ(entries[0].rank, registry::ranks()[0]);
  EXPECT_TRUE(roster::check_backends().has_value());
}

TEST(StaticHeaderOnly, FindsTheCpuBackendAtCompileTime) {
  static_assert(registry::find(BOOST_HANA_STRING("cpu")) == boost::hana::just(boost::hana::type_c<roster::cpu::backend>));
  static_assert(registry::ids()[0] == "cpu");
  using device_t = std::remove_cvref_t<decltype(*registry::open<"cpu">().value())>;
  static_assert(std::is_same_v<device_t, roster::cpu::device>);
  static_assert(roster::static_device<device_t>);
  // The CPU header registers itself, so the link-time view agrees.
  EXPECT_TRUE(registry::check_inventory().has_value()) << registry::check_inventory().error().message();
}

template <class T>
void run_stream() {
  auto opened = registry::open(BOOST_HANA_STRING("cpu"));
  ASSERT_TRUE(opened.has_value()) << opened.error().message();
  roster::cpu::device& dev = **opened;
  const std::size_t n = 5000;  // more than two blocks, not a multiple of one
  // dot's result buffer has the inputs' length (validation wants one length); r[0] holds the sum.
  auto a = dev.allocate<T>(n), b = dev.allocate<T>(n), c = dev.allocate<T>(n), r = dev.allocate<T>(n);
  ASSERT_TRUE(a && b && c && r) << "allocate failed";
  roster::program p;
  p.fill(*a, 1.0).fill(*b, 2.0).fill(*c, 0.0).grid_sync();
  p.copy(*c, *a).grid_sync();         // c = 1
  p.mul(*b, *c, 3.0).grid_sync();     // b = 3
  p.add(*c, *a, *b).grid_sync();      // c = 4
  p.triad(*a, *b, *c, 0.5).grid_sync();   // a = 3 + 2 = 5
  p.nstream(*a, *b, *c, 2.0).grid_sync(); // a = 5 + 3 + 8 = 16
  p.dot(*r, *a, *b);                  // r[0] = 16 * 3 * n
  ASSERT_TRUE(roster::dispatch_static(dev, p).has_value());
  ASSERT_TRUE(dev.synchronize().has_value());
  std::vector<T> ha(n), hb(n), hc(n), hr(n);
  ASSERT_TRUE(dev.template download<T>(*a, ha).has_value());
  ASSERT_TRUE(dev.template download<T>(*b, hb).has_value());
  ASSERT_TRUE(dev.template download<T>(*c, hc).has_value());
  ASSERT_TRUE(dev.template download<T>(*r, hr).has_value());
  for (std::size_t i = 0; i < n; i += 997) {
    EXPECT_EQ(ha[i], T(16)) << i;
    EXPECT_EQ(hb[i], T(3)) << i;
    EXPECT_EQ(hc[i], T(4)) << i;
  }
  EXPECT_EQ(hr[0], T(48) * T(n));
}

TEST(StaticHeaderOnly, RunsTheStreamOpsInDouble) { run_stream<double>(); }
TEST(StaticHeaderOnly, RunsTheStreamOpsInFloat) { run_stream<float>(); }

TEST(StaticHeaderOnly, RunsThroughTheTypedSplit) {
  auto opened = registry::open<"cpu">();
  ASSERT_TRUE(opened.has_value());
  auto split = roster::split_static(std::move(*opened));
  static_assert(std::is_same_v<decltype(split->inner()), roster::cpu::device&>);
  auto a = split->allocate<double>(100), r = split->allocate<double>(100);
  ASSERT_TRUE(a && r);
  roster::program p;
  p.fill(*a, 2.0).grid_sync().dot(*r, *a, *a);
  ASSERT_TRUE(roster::dispatch_static(*split, p).has_value());
  std::vector<double> hr(100);
  ASSERT_TRUE(split->download<double>(*r, hr).has_value());
  EXPECT_EQ(hr[0], 400.0);
}
