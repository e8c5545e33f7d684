#pragma once
// Private: CUDA driver errors as roster errors: the category and the usual
// fix for each code, so every failed call reads the same way.

#include <roster/backend.hpp>

#include <string>
#include <string_view>

namespace roster::cuda::detail {

/// The part of a fix that names the way out: exclude the backend.
inline constexpr std::string_view exclude_fix = "or exclude the backend with ROSTER_DEVICE_SELECTOR='!cuda:*'";

/// Returns roster's category of a CUDA driver error (a CUresult).
ROSTER_INLINE errc category_of(int e) noexcept;

/// Returns the usual cure for a CUDA driver error met while working.
ROSTER_INLINE std::string fix_for(int e);

/// Returns the error of a failed CUDA driver call made while doing `what` on
/// adapter `spec` ("cuda:0"): "cuda:0: what: <the driver's text> (<name>, <number>)".
ROSTER_INLINE roster::error cuda_failure(int e, std::string_view spec, std::string_view what);

}  // namespace roster::cuda::detail
