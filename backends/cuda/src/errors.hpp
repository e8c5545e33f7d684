#pragma once
// Private: CUDA runtime errors as roster errors: the category and the usual
// fix for each code, so every failed call reads the same way.

#include <roster/backends/cuda.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

namespace roster::cuda::detail {

/// The part of a fix that names the way out: exclude the backend.
inline constexpr std::string_view exclude_fix = "or exclude the backend with ROSTER_DEVICE_SELECTOR='!cuda:*'";

/// Returns roster's category of a CUDA runtime error.
errc category_of(cudaError_t e) noexcept;

/// Returns the usual cure for a CUDA error met while working.
std::string fix_for(cudaError_t e);

/// Returns the error of a failed CUDA call made while doing `what` on adapter
/// `spec` ("cuda:0"): "cuda:0: what: <the runtime's text> (<name>, <number>)".
roster::error cuda_failure(cudaError_t e, std::string_view spec, std::string_view what);

}  // namespace roster::cuda::detail
