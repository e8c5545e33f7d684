// The same static library linked into the executable and into a plugin:
// every entry appears once, the copies are counted as duplicates.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include "entries.hpp"
#include "module_loader.hpp"

TEST(inventory_same_static_library, exe_and_plugin_copies_yield_each_entry_once) {
  ASSERT_EQ(roster::inventory<inv_test::common_item>().size(), 3u);
  ASSERT_EQ(roster::inventory<inv_test::note>().size(), 3u);

  void* h = inv_test::open_module(ROSTER_TEST_PLUGIN);
  ASSERT_NE(h, nullptr) << inv_test::module_error();

  auto items = roster::inventory<inv_test::common_item>();
  ASSERT_EQ(items.size(), 3u);
  for (std::size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i]->value, static_cast<int>(i) + 1);
  auto info = roster::inventory_info<inv_test::common_item>();
  EXPECT_EQ(info.duplicates, 3u);
  EXPECT_EQ(info.conflicts, 0u);

  // A type without a key is deduplicated by site as well.
  auto notes = roster::inventory<inv_test::note>();
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0]->text, "common-note-1");
  EXPECT_EQ(notes[2]->text, "common-note-3");
  EXPECT_EQ(roster::inventory_info<inv_test::note>().duplicates, 3u);

  // The executable's copy wins: it is first in the dynamic linker's order.
  const void* where = inv_test::module_base_of(items[0]);
  const void* plugin_where = inv_test::module_base_of(inv_test::module_symbol(h, "inv_common_plugin_marker"));
  ASSERT_NE(where, nullptr);
  ASSERT_NE(plugin_where, nullptr);
  EXPECT_NE(where, plugin_where);
  EXPECT_EQ(where, inv_test::module_base_of(reinterpret_cast<const void*>(&roster::inventory<inv_test::common_item>)));
  ASSERT_TRUE(inv_test::close_module(h));
}
