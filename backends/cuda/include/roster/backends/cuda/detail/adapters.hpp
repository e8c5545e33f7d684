#pragma once
// Private: a CUDA device's identity as an adapter.

#include <roster/backend.hpp>

namespace roster::cuda::detail {

/// Returns the adapter of the driver's device `ordinal`: its identity from
/// cuDeviceGet*, sysfs and the driver's version.
ROSTER_INLINE expected<adapter_info> describe_adapter(int ordinal);

}  // namespace roster::cuda::detail
