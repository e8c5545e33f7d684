// A plugin opened with dlopen (LoadLibrary) appears in the next snapshot and
// disappears after dlclose (FreeLibrary); snapshots handed out before stay
// readable.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include <string>
#include <vector>

#include "entries.hpp"
#include "module_loader.hpp"

namespace {
constexpr inv_test::plugin_item host{{"host", 0}};
}  // namespace
ROSTER_SUBMIT(inv_test::plugin_item, host);

using inv_test::close_module;
using inv_test::module_error;
using inv_test::open_module;
using inv_test::plugin_item;

TEST(inventory_plugin, appears_after_dlopen_and_disappears_after_dlclose) {
  auto before = roster::inventory<plugin_item>();
  ASSERT_EQ(before.size(), 1u);
  const auto generation = roster::inventory_info<plugin_item>().generation;

  void* h = open_module(ROSTER_TEST_PLUGIN);
  ASSERT_NE(h, nullptr) << module_error();
  auto during = roster::inventory<plugin_item>();
  ASSERT_EQ(during.size(), 3u);
  EXPECT_EQ(during[0]->name, "host");
  EXPECT_EQ(during[1]->name, "plugin-1");
  EXPECT_EQ(during[2]->name, "plugin-2");
  EXPECT_GT(roster::inventory_info<plugin_item>().generation, generation);
  const std::vector<const plugin_item*> copy(during.begin(), during.end());

  ASSERT_TRUE(close_module(h));
  ASSERT_FALSE(inv_test::module_loaded(ROSTER_TEST_PLUGIN)) << "the plugin was not unloaded";
  auto after = roster::inventory<plugin_item>();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]->name, "host");
  EXPECT_NE(after.data(), during.data());

  // The old snapshots are still there: their pointers are unchanged, and
  // entries of modules still loaded can be read through them.
  ASSERT_EQ(during.size(), copy.size());
  for (std::size_t i = 0; i < copy.size(); ++i) EXPECT_EQ(during[i], copy[i]);
  EXPECT_EQ(during[0]->name, "host");
  EXPECT_EQ(before[0]->name, "host");
}

TEST(inventory_plugin, slot_of_an_unloaded_plugin_leaves_the_hub) {
  void* probe = open_module(ROSTER_TEST_PLUGIN_PROBE);
  ASSERT_NE(probe, nullptr) << module_error();
  auto count = reinterpret_cast<std::size_t (*)()>(inv_test::module_symbol(probe, "inv_probe_count"));
  ASSERT_NE(count, nullptr) << module_error();
  EXPECT_EQ(count(), 1u);
  ASSERT_TRUE(close_module(probe));
  ASSERT_FALSE(inv_test::module_loaded(ROSTER_TEST_PLUGIN_PROBE)) << "the probe plugin was not unloaded";

  // Loading and unloading another module invalidates every linked slot; a
  // slot left behind by the probe would be written after its memory is gone.
  for (int i = 0; i < 2; ++i) {
    void* h = open_module(ROSTER_TEST_PLUGIN);
    ASSERT_NE(h, nullptr) << module_error();
    EXPECT_EQ(roster::inventory<plugin_item>().size(), 3u);
    ASSERT_TRUE(close_module(h));
    EXPECT_EQ(roster::inventory<plugin_item>().size(), 1u);
  }
}

#if defined(__ELF__)
#  include <roster/detail/inventory/inventory_hub_state.hpp>

#  include <mutex>

// On ELF the loader runs a plugin's unload hook, then unmaps the plugin
// without the hub's mutex. A collection that walks the modules between the
// two must not keep the plugin in the hub's list: it reads every kept
// module's node again, by then perhaps unmapped. The hook's effect is made
// here by hand on a plugin still mapped, so that window is held open.
TEST(inventory_plugin, a_module_whose_unload_hook_ran_leaves_the_module_list) {
  void* h = open_module(ROSTER_TEST_PLUGIN);
  ASSERT_NE(h, nullptr) << module_error();
  ASSERT_EQ(roster::inventory<plugin_item>().size(), 3u);
  roster::detail::module_node* node = roster::detail::detach_module_of(h);
  ASSERT_NE(node, nullptr);
  roster::detail::module_event(*node, roster::detail::module_change::unloading);
  EXPECT_EQ(roster::inventory<plugin_item>().size(), 1u);
  {
    auto& hub = roster::detail::the_hub();
    std::lock_guard lock(hub.mutex);
    for (std::size_t i = 0; i < hub.count; ++i)
      EXPECT_NE(hub.list[i].node, node) << "the hub's list keeps a module whose unload hook ran, at rank " << i;
  }
  ASSERT_TRUE(close_module(h));  // its hook finds the module gone already
  ASSERT_FALSE(inv_test::module_loaded(ROSTER_TEST_PLUGIN)) << "the plugin was not unloaded";
  EXPECT_EQ(roster::inventory<plugin_item>().size(), 1u);
}
#endif
