// Entries of the linker matrix program, from its shlib.
#include "matrix.hpp"

namespace {
constexpr matrix_item first{"shlib-1"};
constexpr matrix_item second{"shlib-2"};
}  // namespace
ROSTER_SUBMIT(matrix_item, first);
ROSTER_SUBMIT(matrix_item, second);

/// Makes the executable need this library under --as-needed.
extern "C" int matrix_shlib_marker() { return 1; }
