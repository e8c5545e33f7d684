// A header-only plugin opened with dlopen by test_header_only.
#include <roster/inventory.hpp>

#include "entries.hpp"

namespace {
constexpr inv_test::header_only_item entry{{"plugin", 9}};
}  // namespace
ROSTER_SUBMIT(inv_test::header_only_item, entry);
