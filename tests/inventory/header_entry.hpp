#pragma once
// A submission in a header that several translation units include: every
// unit gets its own record, all pointing at one inline object.

#include "entries.hpp"

namespace inv_test {
inline constexpr header_item header_shared{{"from-header", 7}};
}  // namespace inv_test

ROSTER_SUBMIT(inv_test::header_item, inv_test::header_shared);
