#pragma once
// Private: hooks for roster's own OpenCL tests; not installed, not API.

#include <roster/config.hpp>

#include <cstdint>
#include <string>

namespace roster::opencl::detail {

/// What the backend has done in this process so far, over every device.
struct activity {
  std::uint64_t kernels_enqueued = 0;  ///< clEnqueueNDRangeKernel calls
  std::uint64_t programs_built = 0;    ///< clBuildProgram calls that succeeded
};

/// Returns the counts, so a test can tell how many kernels a program became
/// (fusion) and whether a program was built again (the kernel cache).
ROSTER_API activity activity_so_far() noexcept;

/// Returns a kernel parameter's type name as the parameter check compares it
/// (what clGetKernelArgInfo reported, qualifiers dropped, "unsigned int" as
/// "uint"), so a test can try the spellings other drivers use.
ROSTER_API std::string kernel_type_name(const std::string& reported);

}  // namespace roster::opencl::detail
