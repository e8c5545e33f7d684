// Every entry survives the linker and flags this executable was built with
// (ROSTER_TEST_LINK names them): gc-sections, LTO, bfd, gold, lld, mold.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include "entries.hpp"

namespace {
constexpr inv_test::linker_item l1{{"exe-1", 1}};
}  // namespace
ROSTER_SUBMIT(inv_test::linker_item, l1);

TEST(inventory_linker, every_entry_survives_the_link) {
  auto span = roster::inventory<inv_test::linker_item>();
  ASSERT_EQ(span.size(), 3u) << "linked with " << ROSTER_TEST_LINK;
  EXPECT_EQ(span[0]->name, "archive-2");
  EXPECT_EQ(span[1]->name, "archive-3");
  EXPECT_EQ(span[2]->name, "exe-1");
  EXPECT_EQ(span[2]->value, 1);
}
