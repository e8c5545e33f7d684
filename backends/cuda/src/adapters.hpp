#pragma once
// Private: a CUDA device's identity as an adapter.

#include <roster/backends/cuda.hpp>

namespace roster::cuda::detail {

/// Returns the adapter of the runtime's device `ordinal`: its identity from
/// cudaGetDeviceProperties, sysfs and the driver's version.
expected<adapter_info> describe_adapter(int ordinal);

}  // namespace roster::cuda::detail
