// The bridge: one macro registers a backend type in the static registry's
// contract and in the link-time inventory; both views list the same backends
// in the same (rank, id) order. This program links no backend library.

#include "fake_backend.hpp"

#include <roster/static_registry.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace roster_test {
using late = fake_backend<"late", 40>;
using early = fake_backend<"early", 5>;
using tie_b = fake_backend<"tie_b", 20, false, false>;
using tie_a = fake_backend<"tie_a", 20>;
using unregistered = fake_backend<"unregistered", 1>;
using other_rank = fake_backend<"early", 99>;
}  // namespace roster_test

// Registered in an order that is neither rank nor id order.
ROSTER_REGISTER_STATIC_BACKEND(roster_test::late);
ROSTER_REGISTER_STATIC_BACKEND(roster_test::tie_b);
ROSTER_REGISTER_STATIC_BACKEND(roster_test::early);
ROSTER_REGISTER_STATIC_BACKEND(roster_test::tie_a);

namespace {
using registry = roster::static_registry<roster_test::tie_b, roster_test::late, roster_test::early, roster_test::tie_a>;
}

TEST(StaticBridge, BothViewsListTheSameBackendsInTheSameOrder) {
  std::vector<std::pair<int, std::string_view>> inventory_view;
  std::vector<bool> dispatches;
  for (const auto& e : roster::registered_backends()) {
    inventory_view.emplace_back(e.rank, e.id());
    dispatches.push_back(e.dispatches);
  }
  std::vector<std::pair<int, std::string_view>> static_view;
  registry::for_each([&](auto t) {
    using B = typename decltype(t)::type;
    static_view.emplace_back(B::rank, B::id);
  });
  const std::vector<std::pair<int, std::string_view>> expected{{5, "early"}, {20, "tie_a"}, {20, "tie_b"}, {40, "late"}};
  EXPECT_EQ(static_view, expected);
  EXPECT_EQ(inventory_view, expected);
  EXPECT_EQ(dispatches, (std::vector<bool>{true, true, false, true}));
  EXPECT_TRUE(registry::check_inventory().has_value());
}

TEST(StaticBridge, TheInventoryOpensWhatTheMacroRegistered) {
  auto d = roster::acquire("tie_a");
  ASSERT_TRUE(d.has_value()) << d.error().message();
  EXPECT_EQ((*d)->adapter().backend, "tie_a");
  EXPECT_TRUE(roster::check_backends().has_value());
}

TEST(StaticBridge, CheckInventoryNamesAMissingBackend) {
  using reg = roster::static_registry<roster_test::early, roster_test::unregistered>;
  auto ok = reg::check_inventory();
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().code(), roster::errc::not_found);
  EXPECT_NE(ok.error().what().find("unregistered"), std::string_view::npos) << ok.error().message();
  EXPECT_NE(ok.error().fix().find("ROSTER_REGISTER_STATIC_BACKEND"), std::string_view::npos);
}

TEST(StaticBridge, CheckInventoryNamesABackendWhoseRankDiffers) {
  using reg = roster::static_registry<roster_test::other_rank>;
  auto ok = reg::check_inventory();
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().code(), roster::errc::conflict);
  EXPECT_NE(ok.error().what().find("early"), std::string_view::npos) << ok.error().message();
  EXPECT_FALSE(ok.error().fix().empty());
}
