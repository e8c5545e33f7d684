// First shared library of test_shared.
#include "entries.hpp"

namespace {
constexpr inv_test::shared_item a1{{"lib-a-1", 11}};
constexpr inv_test::shared_item a2{{"lib-a-2", 12}};
}  // namespace
ROSTER_SUBMIT(inv_test::shared_item, a1);
ROSTER_SUBMIT(inv_test::shared_item, a2);

/// Returns a value so the executable needs this library (--as-needed keeps it).
extern "C" int inv_shared_a_marker() { return 1; }
