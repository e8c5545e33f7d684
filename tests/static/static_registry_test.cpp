// The compile-time registry: order, lookup, iteration, and static dispatch.

#include "fake_backend.hpp"

#include <roster/static_registry.hpp>

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

namespace hana = boost::hana;
using roster_test::fake_backend;
using roster_test::fake_device;

namespace {

using gpu_b = fake_backend<"gpu_b", 10>;
using gpu_a = fake_backend<"gpu_a", 10>;  // ties gpu_b on rank: id decides
using host = fake_backend<"host", 30>;
using first = fake_backend<"first", -5, true>;
// Listed out of order on purpose.
using registry = roster::static_registry<host, gpu_b, first, gpu_a>;

constexpr std::string_view join_ids = [] {
  constexpr auto ids = registry::ids();
  return ids[0];
}();

}  // namespace

TEST(StaticRegistry, SortsByRankThenIdAtCompileTime) {
  constexpr auto ids = registry::ids();
  static_assert(ids.size() == 4);
  static_assert(ids[0] == "first" && ids[1] == "gpu_a" && ids[2] == "gpu_b" && ids[3] == "host");
  static_assert(join_ids == "first");
  constexpr auto ranks = registry::ranks();
  static_assert(ranks[0] == -5 && ranks[1] == 10 && ranks[2] == 10 && ranks[3] == 30);
  static_assert(registry::backends == hana::tuple_t<first, gpu_a, gpu_b, host>);
  EXPECT_EQ(std::vector<std::string_view>(ids.begin(), ids.end()),
            (std::vector<std::string_view>{"first", "gpu_a", "gpu_b", "host"}));
}

TEST(StaticRegistry, FindsByCompileTimeString) {
  constexpr auto hit = registry::find(BOOST_HANA_STRING("gpu_b"));
  static_assert(hit == hana::just(hana::type_c<gpu_b>));
  static_assert(registry::find(BOOST_HANA_STRING("vulkan")) == hana::nothing);
  static_assert(registry::contains(BOOST_HANA_STRING("host")));
  static_assert(!registry::contains(BOOST_HANA_STRING("HOST")));  // ids are case-sensitive
  static_assert(registry::get<"gpu_a">() == hana::type_c<gpu_a>);
  static_assert(registry::get(BOOST_HANA_STRING("first")) == hana::type_c<first>);
  using found = decltype(registry::get<"host">())::type;
  static_assert(std::is_same_v<found, host>);
  EXPECT_EQ(registry::index_of("gpu_b"), 2u);
  EXPECT_EQ(registry::index_of("nope"), registry::size);
}

TEST(StaticRegistry, ForEachVisitsInRankOrder) {
  std::vector<std::string_view> seen;
  std::vector<int> ranks;
  registry::for_each([&](auto t) {
    using B = typename decltype(t)::type;
    static_assert(roster::backend<B>);
    seen.push_back(B::id);
    ranks.push_back(B::rank);
  });
  EXPECT_EQ(seen, (std::vector<std::string_view>{"first", "gpu_a", "gpu_b", "host"}));
  EXPECT_EQ(ranks, (std::vector<int>{-5, 10, 10, 30}));
}

TEST(StaticRegistry, EmptyAndSingleRegistries) {
  using none = roster::static_registry<>;
  static_assert(none::size == 0 && none::ids().size() == 0);
  static_assert(none::find(BOOST_HANA_STRING("cpu")) == hana::nothing);
  int calls = 0;
  none::for_each([&](auto) { ++calls; });
  EXPECT_EQ(calls, 0);
  using one = roster::static_registry<host>;
  static_assert(one::ids()[0] == "host");
}

TEST(StaticDispatch, DeviceTypeIsTheConcreteFinalType) {
  auto d = registry::open<"gpu_a">();
  ASSERT_TRUE(d.has_value()) << d.error().message();
  // The compiler knows the device's type: the backend's final class, not roster::device.
  using opened = std::remove_cvref_t<decltype(*d.value())>;
  static_assert(std::is_same_v<opened, fake_device>);
  static_assert(std::is_final_v<opened>);
  static_assert(roster::static_device<opened>);
  static_assert(!roster::static_device<roster::device>);
  static_assert(roster::static_device<roster::grid_sync_split<fake_device>>);
  auto e = registry::open(BOOST_HANA_STRING("host"));
  static_assert(std::is_same_v<decltype(e), roster::expected<std::unique_ptr<fake_device>>>);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ((*e)->adapter().backend, "host");
}

TEST(StaticDispatch, RunsTheStreamOps) {
  auto d = registry::open<"host">();
  ASSERT_TRUE(d.has_value());
  fake_device& dev = **d;
  const std::size_t n = 16;
  auto a = dev.allocate<double>(n), b = dev.allocate<double>(n), c = dev.allocate<double>(n),
       r = dev.allocate<double>(n);
  ASSERT_TRUE(a && b && c && r);
  roster::program p;
  p.fill(*a, 1.0).fill(*b, 2.0).copy(*c, *a).mul(*b, *c, 3.0).add(*c, *a, *b).triad(*a, *b, *c, 0.5)
      .nstream(*a, *b, *c, 2.0).dot(*r, *a, *b);
  ASSERT_TRUE(roster::dispatch_static(dev, p).has_value());
  std::vector<double> ha(n), hr(n);
  ASSERT_TRUE(dev.download<double>(*a, ha).has_value());
  ASSERT_TRUE(dev.download<double>(*r, hr).has_value());
  // a = 1; b = 3; c = 4; a = 3 + 2 = 5; a += 3 + 8 = 16; r = 16 * 3 * 16 = 768.
  EXPECT_DOUBLE_EQ(ha[0], 16.0);
  EXPECT_DOUBLE_EQ(hr[0], 768.0);
  EXPECT_EQ(dev.pieces, 1);
}

TEST(StaticDispatch, SplitsAtGridSyncWithoutNativeSync) {
  auto d = registry::open<"host">();  // no native grid sync
  ASSERT_TRUE(d.has_value());
  auto a = (*d)->allocate<double>(4);
  ASSERT_TRUE(a.has_value());
  roster::program p;
  p.fill(*a, 1.0).grid_sync().fill(*a, 2.0);
  ASSERT_TRUE(roster::dispatch_static(**d, p).has_value());
  EXPECT_EQ((*d)->pieces, 2);

  auto n = registry::open<"first">();  // native grid sync: one call
  ASSERT_TRUE(n.has_value());
  auto b = (*n)->allocate<double>(4);
  ASSERT_TRUE(b.has_value());
  roster::program q;
  q.fill(*b, 1.0).grid_sync().fill(*b, 2.0);
  ASSERT_TRUE(roster::dispatch_static(**n, q).has_value());
  EXPECT_EQ((*n)->pieces, 1);
}

TEST(StaticDispatch, RunsThroughTheTypedGridSyncSplit) {
  auto d = registry::open<"first">();
  ASSERT_TRUE(d.has_value());
  fake_device* inner = d->get();
  auto split = roster::split_static(std::move(*d));
  static_assert(std::is_same_v<decltype(split), std::unique_ptr<roster::grid_sync_split<fake_device>>>);
  static_assert(std::is_same_v<decltype(split->inner()), fake_device&>);
  auto a = split->allocate<double>(4);
  ASSERT_TRUE(a.has_value());
  roster::program p;
  p.fill(*a, 7.0).grid_sync().fill(*a, 8.0);
  ASSERT_TRUE(roster::dispatch_static(*split, p).has_value());
  EXPECT_EQ(inner->pieces, 2);  // cut even though the inner device has native sync
  roster::program q;
  q.fill(*a, 9.0);
  ASSERT_TRUE(roster::dispatch_static(*split, q).has_value());
  EXPECT_EQ(inner->pieces, 3);
  std::vector<double> h(4);
  ASSERT_TRUE(split->download<double>(*a, h).has_value());
  EXPECT_DOUBLE_EQ(h[3], 9.0);
}

TEST(StaticDispatch, RejectsWhatDispatchRejects) {
  auto d = registry::open<"host">();
  auto other = registry::open<"gpu_a">();
  ASSERT_TRUE(d && other);
  auto a = (*d)->allocate<double>(4);
  auto foreign = (*other)->allocate<double>(4);
  ASSERT_TRUE(a && foreign);

  roster::program empty;
  auto e1 = roster::dispatch_static(**d, empty);
  ASSERT_FALSE(e1.has_value());
  EXPECT_EQ(e1.error().code(), roster::errc::invalid_argument);
  EXPECT_FALSE(e1.error().fix().empty());

  roster::program wrong;
  wrong.fill(*foreign, 1.0);
  auto e2 = roster::dispatch_static(**d, wrong);
  ASSERT_FALSE(e2.has_value());
  EXPECT_NE(e2.error().what().find("another device"), std::string_view::npos) << e2.error().message();
  EXPECT_FALSE(e2.error().fix().empty());

  auto gone = (*d)->allocate<double>(4);
  ASSERT_TRUE(gone.has_value());
  ASSERT_TRUE((*d)->release(*gone).has_value());
  roster::program dead;
  dead.fill(*gone, 1.0);
  auto e3 = roster::dispatch_static(**d, dead);
  ASSERT_FALSE(e3.has_value());
  EXPECT_NE(e3.error().what().find("not live"), std::string_view::npos) << e3.error().message();
  EXPECT_FALSE(e3.error().fix().empty());

  (*d)->drop(roster::op::triad);
  roster::program tri;
  tri.triad(*a, *a, *a, 1.0);
  auto e4 = roster::dispatch_static(**d, tri);
  ASSERT_FALSE(e4.has_value());
  EXPECT_EQ(e4.error().code(), roster::errc::unsupported);
  EXPECT_FALSE(e4.error().fix().empty());
  EXPECT_EQ((*d)->pieces, 0);
}

TEST(StaticDispatch, OpenTurnsAThrowIntoAnError) {
  using reg = roster::static_registry<roster_test::throwing_backend, host>;
  auto d = reg::open<"throws">();
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code(), roster::errc::internal);
  EXPECT_NE(d.error().what().find("boom"), std::string_view::npos);
  EXPECT_FALSE(d.error().fix().empty());
  auto bad = reg::open<"host">(3);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), roster::errc::not_found);
}
