// A plugin opened with dlopen appears in the next snapshot and disappears
// after dlclose; snapshots handed out before stay readable.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include <dlfcn.h>

#include <string>
#include <vector>

#include "entries.hpp"

namespace {
constexpr inv_test::plugin_item host{{"host", 0}};
}  // namespace
ROSTER_SUBMIT(inv_test::plugin_item, host);

using inv_test::plugin_item;

namespace {
bool loaded(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return false;
  dlclose(h);
  return true;
}
}  // namespace

TEST(inventory_plugin, appears_after_dlopen_and_disappears_after_dlclose) {
  auto before = roster::inventory<plugin_item>();
  ASSERT_EQ(before.size(), 1u);
  const auto generation = roster::inventory_info<plugin_item>().generation;

  void* h = dlopen(ROSTER_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto during = roster::inventory<plugin_item>();
  ASSERT_EQ(during.size(), 3u);
  EXPECT_EQ(during[0]->name, "host");
  EXPECT_EQ(during[1]->name, "plugin-1");
  EXPECT_EQ(during[2]->name, "plugin-2");
  EXPECT_GT(roster::inventory_info<plugin_item>().generation, generation);
  const std::vector<const plugin_item*> copy(during.begin(), during.end());

  ASSERT_EQ(dlclose(h), 0);
  ASSERT_FALSE(loaded(ROSTER_TEST_PLUGIN)) << "the plugin was not unloaded";
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
  void* probe = dlopen(ROSTER_TEST_PLUGIN_PROBE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(probe, nullptr) << dlerror();
  auto count = reinterpret_cast<std::size_t (*)()>(dlsym(probe, "inv_probe_count"));
  ASSERT_NE(count, nullptr) << dlerror();
  EXPECT_EQ(count(), 1u);
  ASSERT_EQ(dlclose(probe), 0);
  ASSERT_FALSE(loaded(ROSTER_TEST_PLUGIN_PROBE)) << "the probe plugin was not unloaded";

  // Loading and unloading another module invalidates every linked slot; a
  // slot left behind by the probe would be written after its memory is gone.
  for (int i = 0; i < 2; ++i) {
    void* h = dlopen(ROSTER_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    EXPECT_EQ(roster::inventory<plugin_item>().size(), 3u);
    ASSERT_EQ(dlclose(h), 0);
    EXPECT_EQ(roster::inventory<plugin_item>().size(), 1u);
  }
}
