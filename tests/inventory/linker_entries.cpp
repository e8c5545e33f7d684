// Entries in a static library for the linker, gc-sections and LTO tests.
#include "entries.hpp"

namespace {
constexpr inv_test::linker_item l2{{"archive-2", 2}};
constexpr inv_test::linker_item l3{{"archive-3", 3}};
}  // namespace
ROSTER_SUBMIT(inv_test::linker_item, l2);
ROSTER_SUBMIT(inv_test::linker_item, l3);
