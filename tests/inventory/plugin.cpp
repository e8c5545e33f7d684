// A plugin opened with dlopen by test_plugin.
#include "entries.hpp"

namespace {
constexpr inv_test::plugin_item p1{{"plugin-1", 1}};
constexpr inv_test::plugin_item p2{{"plugin-2", 2}};
}  // namespace
ROSTER_SUBMIT(inv_test::plugin_item, p1);
ROSTER_SUBMIT(inv_test::plugin_item, p2);
