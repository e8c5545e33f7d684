// A plugin that collects an inventory of a type only it knows, so the slot
// of that type lives in this plugin and must leave the hub on dlclose.
#include "entries.hpp"

namespace {
struct own_item : inv_test::item {};
constexpr own_item own{{"own", 1}};
}  // namespace
ROSTER_SUBMIT(own_item, own);

/// Returns how many own_item entries this plugin sees.
extern "C" __attribute__((visibility("default"))) std::size_t inv_probe_count() {
  return roster::inventory<own_item>().size();
}
