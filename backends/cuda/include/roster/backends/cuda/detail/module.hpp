#pragma once
// Private: the built-in kernels as the host sees them: the fat image
// (fatbin/kernels_fatbin.hpp, generated from src/kernels.cu and committed),
// loaded into a device's context with cuModuleLoadData, and the launches
// that build each kernel's parameter array for cuLaunchKernel or
// cuLaunchCooperativeKernel.

#include <roster/config.hpp>
#include <roster/backends/cuda/detail/driver_api.hpp>
#include <roster/backends/cuda/detail/kernels.hpp>

#include <cstdint>
#include <string>

namespace roster::cuda::detail {

/// Returns the CUDA version (1000 x major + 10 x minor) of the toolkit that built the image.
ROSTER_INLINE int kernels_cuda_version() noexcept;
/// Returns the SASS and PTX in the image, e.g. "sm_75 sm_80 ... compute_75".
ROSTER_INLINE const char* kernels_architectures() noexcept;
/// Says how the functions of a loaded image run on a GPU of compute
/// capability `cc` (10 x major + minor), from the driver's own answer for one
/// of them: SASS from the image, or PTX the driver compiled at the load.
ROSTER_INLINE std::string describe_load(cu_function f, int cc);

/// The kernels one device launches: the module loaded in its context, and
/// the functions of the variant it opened with ([0] float, [1] double).
struct kernel_set {
  cu_module module = nullptr;
  int variant = default_variant;
  cu_function stream[2][kop_count] = {};  ///< fill to nstream; dot has none
  cu_function dot_coop[2] = {}, dot_partial[2] = {}, dot_final[2] = {};
  cu_function program_coop[2] = {}, program_split[2] = {};
};

/// Loads the image into the current context and looks up the functions of
/// `variant`; returns a CUresult, and in `what` the call that failed.
ROSTER_INLINE int load_kernels(kernel_set& k, int variant, std::string& what);

/// Runs one element-wise step with its specialised kernel (the single-op fast path).
ROSTER_INLINE int launch_stream(const kernel_set& k, const kstep& st, std::uint64_t n, bool f64, int grid,
                                cu_stream s) noexcept;
/// Runs one dot as one cooperative launch: block partials, grid sync, final sum by block 0.
ROSTER_INLINE int launch_dot_coop(const kernel_set& k, const kstep& st, std::uint64_t n, bool f64, double* partials,
                                  int grid, cu_stream s) noexcept;
/// Runs one dot as two plain launches: block partials, then the final sum.
ROSTER_INLINE int launch_dot_split(const kernel_set& k, const kstep& st, std::uint64_t n, bool f64, double* partials,
                                   int grid, cu_stream s) noexcept;
/// Runs a whole kprogram as one cooperative launch with grid-wide sync between segments.
ROSTER_INLINE int launch_program_coop(const kernel_set& k, const kprogram& p, bool f64, int grid,
                                      cu_stream s) noexcept;
/// Runs segment `seg` of a kprogram as plain launches: the fused pass, then (for a dot) the final sum.
ROSTER_INLINE int launch_segment_split(const kernel_set& k, const kprogram& p, int seg, bool f64, int grid,
                                       cu_stream s) noexcept;

}  // namespace roster::cuda::detail
