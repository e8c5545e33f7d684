// Entries of the linker matrix program, from its unit, two of them
// conditional: one whose condition holds, one skipped at collection.
#include "matrix.hpp"

namespace {
constexpr matrix_item first{"unit-1"};
constexpr matrix_item second{"unit-2"};
constexpr matrix_item kept_if{"unit-3"};
constexpr matrix_item skipped_if{"unit-skipped"};
}  // namespace
ROSTER_SUBMIT(matrix_item, first);
ROSTER_SUBMIT(matrix_item, second);
ROSTER_IMPL_SUBMIT_IF(matrix_item, sizeof(void*) >= 4, kept_if);
ROSTER_IMPL_SUBMIT_IF(matrix_item, sizeof(void*) < 4, skipped_if);
