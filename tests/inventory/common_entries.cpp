// A static library linked whole into both test_same_static and its plugin.
#include "entries.hpp"

namespace {
constexpr inv_test::common_item c1{{"common-1", 1}};
constexpr inv_test::common_item c2{{"common-2", 2}};
constexpr inv_test::common_item c3{{"common-3", 3}};
constexpr inv_test::note n1{"common-note-1"};
constexpr inv_test::note n2{"common-note-2"};
constexpr inv_test::note n3{"common-note-3"};
}  // namespace
ROSTER_SUBMIT(inv_test::common_item, c1);
ROSTER_SUBMIT(inv_test::common_item, c2);
ROSTER_SUBMIT(inv_test::common_item, c3);
ROSTER_SUBMIT(inv_test::note, n1);
ROSTER_SUBMIT(inv_test::note, n2);
ROSTER_SUBMIT(inv_test::note, n3);
