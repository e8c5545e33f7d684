// Second shared library of test_shared.
#include "entries.hpp"

namespace {
constexpr inv_test::shared_item b1{{"lib-b-1", 21}};
}  // namespace
ROSTER_SUBMIT(inv_test::shared_item, b1);

/// Returns a value so the executable needs this library (--as-needed keeps it).
extern "C" int inv_shared_b_marker() { return 2; }
