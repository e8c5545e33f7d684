// Submissions for test_basic from a third translation unit.
#include "entries.hpp"
#include "header_entry.hpp"

namespace {
constexpr inv_test::exe_item alpha{{"alpha", 1}};
constexpr inv_test::conflict_item twin_b{{"twin", 2}};
constexpr inv_test::note note_b1{"b1"};
constexpr inv_test::sized_48 s48_1{1, "forty-eight"};
constexpr inv_test::sized_48 s48_2{2, "forty-eight"};
constexpr inv_test::sized_64 s64_1{1, "sixty-four"};
constexpr inv_test::sized_200 s200_2{2, "two-hundred"};
constexpr inv_test::aligned_64 a64_1{1};
constexpr inv_test::aligned_64 a64_3{3};
constexpr inv_test::aligned_256 a256_1{1};
constexpr inv_test::aligned_256 a256_3{3};
constexpr inv_test::race_item race_c{{"race-c", 3}};
}  // namespace

ROSTER_SUBMIT(inv_test::exe_item, alpha);
ROSTER_SUBMIT(inv_test::conflict_item, twin_b);
ROSTER_SUBMIT(inv_test::note, note_b1);
ROSTER_SUBMIT(inv_test::sized_48, s48_1);
ROSTER_SUBMIT(inv_test::sized_48, s48_2);
ROSTER_SUBMIT(inv_test::sized_64, s64_1);
ROSTER_SUBMIT(inv_test::sized_200, s200_2);
ROSTER_SUBMIT(inv_test::aligned_64, a64_1);
ROSTER_SUBMIT(inv_test::aligned_64, a64_3);
ROSTER_SUBMIT(inv_test::aligned_256, a256_1);
ROSTER_SUBMIT(inv_test::aligned_256, a256_3);
ROSTER_SUBMIT(inv_test::race_item, race_c);
