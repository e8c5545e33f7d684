// ROSTER_PLUGIN_PATH names a folder holding a plugin whose start-up code calls
// registered_backends() and loaded_plugins() while the automatic load is
// still opening it (a deadlock or a recursive static initialisation without
// the guards in plugins-inl.hpp).
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>

TEST(consumers_plugin_reentrant, start_up_code_may_call_roster) {
  auto all = roster::registered_backends();
  EXPECT_TRUE(std::any_of(all.begin(), all.end(),
                          [](const roster::backend_entry& e) { return e.id() == "toy-reentrant"; }));
  const auto& once = roster::load_plugin_path_once();
  ASSERT_TRUE(once.has_value()) << once.error().message();
  ASSERT_EQ(roster::loaded_plugins().size(), 1u);
  auto seen = reinterpret_cast<int (*)()>(dlsym(roster::loaded_plugins()[0].handle, "roster_test_reentrant_seen"));
  ASSERT_NE(seen, nullptr) << dlerror();
  // It ran, saw its own backend among the registered ones, and no plugin yet
  // in the list (the load that is opening it has not returned).
  EXPECT_GE(seen(), 1000) << seen();
  EXPECT_EQ(seen() % 1000, 0) << seen();
  ASSERT_TRUE(roster::unload_plugin(roster::loaded_plugins()[0]).has_value());
}
