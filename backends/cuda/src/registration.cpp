// The CUDA backend's registration: backend, precedence, capability and one
// built-in kernel entry per op and element type (with no launcher of its
// own: a call of one runs in the program's one launch, as device::dispatch
// maps it onto the built-in step), and the anchor that keeps it linked.

#include <roster/backends/cuda.hpp>

ROSTER_REGISTER_BACKEND(roster::cuda::backend);

// The symbol ROSTER_USE_BACKEND(cuda) and the installed packages refer to.
ROSTER_DEFINE_BACKEND_ANCHOR(cuda);
