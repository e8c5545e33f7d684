// Submissions for test_basic from a second translation unit.
#include "entries.hpp"
#include "header_entry.hpp"

namespace {
constexpr inv_test::exe_item beta{{"beta", 2}};
constexpr inv_test::conflict_item twin_a{{"twin", 1}};
constexpr inv_test::note note_a1{"a1"};
constexpr inv_test::note note_a2{"a2"};
constexpr inv_test::sized_48 s48_3{3, "forty-eight"};
constexpr inv_test::sized_64 s64_2{2, "sixty-four"};
constexpr inv_test::sized_200 s200_1{1, "two-hundred"};
constexpr inv_test::aligned_64 a64_2{2};
constexpr inv_test::aligned_256 a256_2{2};
constexpr inv_test::race_item race_b{{"race-b", 2}};
}  // namespace

ROSTER_SUBMIT(inv_test::exe_item, beta);
ROSTER_SUBMIT(inv_test::conflict_item, twin_a);
ROSTER_SUBMIT(inv_test::note, note_a1);
ROSTER_SUBMIT(inv_test::note, note_a2);
ROSTER_SUBMIT(inv_test::sized_48, s48_3);
ROSTER_SUBMIT(inv_test::sized_64, s64_2);
ROSTER_SUBMIT(inv_test::sized_200, s200_1);
ROSTER_SUBMIT(inv_test::aligned_64, a64_2);
ROSTER_SUBMIT(inv_test::aligned_256, a256_2);
ROSTER_SUBMIT(inv_test::race_item, race_b);
