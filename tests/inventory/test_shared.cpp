// Two shared libraries and the executable: one merged, sorted view.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include "entries.hpp"

extern "C" int inv_shared_a_marker();
extern "C" int inv_shared_b_marker();

namespace {
constexpr inv_test::shared_item x1{{"exe-1", 1}};
}  // namespace
ROSTER_SUBMIT(inv_test::shared_item, x1);

TEST(inventory_shared_libraries, sections_of_every_module_merge) {
  ASSERT_EQ(inv_shared_a_marker() + inv_shared_b_marker(), 3);
  auto span = roster::inventory<inv_test::shared_item>();
  ASSERT_EQ(span.size(), 4u);
  EXPECT_EQ(span[0]->name, "exe-1");
  EXPECT_EQ(span[1]->name, "lib-a-1");
  EXPECT_EQ(span[2]->name, "lib-a-2");
  EXPECT_EQ(span[3]->name, "lib-b-1");
  EXPECT_EQ(span[3]->value, 21);
  auto info = roster::inventory_info<inv_test::shared_item>();
  EXPECT_GE(info.modules, 3u);
  EXPECT_EQ(info.conflicts, 0u);
  EXPECT_EQ(info.duplicates, 0u);
}
