// The same static library linked into the executable and into a plugin:
// every entry appears once, the copies are counted as duplicates.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include <dlfcn.h>

#include "entries.hpp"

TEST(inventory_same_static_library, exe_and_plugin_copies_yield_each_entry_once) {
  ASSERT_EQ(roster::inventory<inv_test::common_item>().size(), 3u);
  ASSERT_EQ(roster::inventory<inv_test::note>().size(), 3u);

  void* h = dlopen(ROSTER_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();

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
  Dl_info where{};
  ASSERT_NE(dladdr(items[0], &where), 0);
  Dl_info plugin_where{};
  ASSERT_NE(dladdr(dlsym(h, "inv_common_plugin_marker"), &plugin_where), 0);
  EXPECT_NE(where.dli_fbase, plugin_where.dli_fbase);
  ASSERT_EQ(dlclose(h), 0);
}
