// Entries of the linker matrix program, from its archive.
#include "matrix.hpp"

namespace {
constexpr matrix_item first{"archive-1"};
constexpr matrix_item second{"archive-2"};
}  // namespace
ROSTER_SUBMIT(matrix_item, first);
ROSTER_SUBMIT(matrix_item, second);
