// Entries of the linker matrix program, from its unit.
#include "matrix.hpp"

namespace {
constexpr matrix_item first{"unit-1"};
constexpr matrix_item second{"unit-2"};
}  // namespace
ROSTER_SUBMIT(matrix_item, first);
ROSTER_SUBMIT(matrix_item, second);
