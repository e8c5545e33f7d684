// 10,000 entries generated across 100 translation units.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include "gen_item.hpp"

TEST(inventory_generated, ten_thousand_entries_from_one_hundred_units) {
  auto span = roster::inventory<gen_item>();
  ASSERT_EQ(span.size(), 10000u);
  for (std::uint32_t i = 0; i < span.size(); ++i) {
    ASSERT_EQ(span[i]->id, i);
    ASSERT_EQ(span[i]->check, gen_check(i));
  }
  auto info = roster::inventory_info<gen_item>();
  EXPECT_EQ(info.conflicts, 0u);
  EXPECT_EQ(info.duplicates, 0u);
}
