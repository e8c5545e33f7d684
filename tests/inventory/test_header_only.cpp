// Header-only mode (ROSTER_HEADER_ONLY, no libroster): the executable, two
// shared libraries and a dlopened plugin share one hub and one view.
#include <gtest/gtest.h>

#include <roster/inventory.hpp>

#include <dlfcn.h>

#include "entries.hpp"

#if !defined(ROSTER_HEADER_ONLY)
#  error "test_header_only must be built with ROSTER_HEADER_ONLY"
#endif

extern "C" const void* header_only_hub_a();
extern "C" const void* header_only_hub_b();
extern "C" std::size_t header_only_count_a();
extern "C" std::size_t header_only_count_b();

namespace {
constexpr inv_test::header_only_item entry{{"exe", 0}};
}  // namespace
ROSTER_SUBMIT(inv_test::header_only_item, entry);

using inv_test::header_only_item;

TEST(inventory_header_only, executable_and_shared_libraries_share_one_hub) {
  const void* hub = &roster::detail::the_hub();
  EXPECT_EQ(header_only_hub_a(), hub);
  EXPECT_EQ(header_only_hub_b(), hub);
  auto span = roster::inventory<header_only_item>();
  ASSERT_EQ(span.size(), 3u);
  EXPECT_EQ(span[0]->name, "exe");
  EXPECT_EQ(span[1]->name, "lib-a");
  EXPECT_EQ(span[2]->name, "lib-b");
  EXPECT_EQ(header_only_count_a(), 3u);
  EXPECT_EQ(header_only_count_b(), 3u);
}

TEST(inventory_header_only, dlopened_plugin_joins_the_executable_hub) {
  void* h = dlopen(ROSTER_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto span = roster::inventory<header_only_item>();
  ASSERT_EQ(span.size(), 4u);
  EXPECT_EQ(span[3]->name, "plugin");
  EXPECT_EQ(header_only_count_a(), 4u);
  ASSERT_EQ(dlclose(h), 0);
  void* again = dlopen(ROSTER_TEST_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
  if (again == nullptr) {
    EXPECT_EQ(roster::inventory<header_only_item>().size(), 3u);
  } else {
    dlclose(again);
    ADD_FAILURE() << "the header-only plugin stayed loaded after dlclose";
  }
}
