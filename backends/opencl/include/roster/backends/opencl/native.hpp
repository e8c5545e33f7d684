#pragma once
/// The OpenCL backend's native handles: the platform, device, context and
/// command queue a roster device runs on, and the cl_mem behind a roster
/// buffer, for a user's own OpenCL kernels between roster's programs. Include
/// it only where you use OpenCL yourself: it brings in <CL/cl.h> (the
/// backend's other header does not). The ordering contract: docs/native.md.

#include <roster/native.hpp>
#include <roster/program.hpp>

// CL/cl.h asks for a target version and says so when none is set; 3.0 is
// its own default, declared here only to keep that message quiet.
#if !defined(CL_TARGET_OPENCL_VERSION)
#  define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace roster::opencl {

/// An opened OpenCL adapter, declared by <roster/backends/opencl.hpp>, which compiles
/// the backend (these handles' code too) in a ROSTER_SOURCE or
/// ROSTER_HEADER_ONLY file: include it there as well.
class device;

/// The handles behind an OpenCL device (roster::native<roster::opencl::native>(dev)).
/// roster owns every handle: do not release them (retain one with
/// clRetain* if you keep it past the device). The queue is in order, so work
/// you enqueue on it runs after roster's earlier work and before its later
/// work; roster::device::synchronize() is clFinish(queue).
struct native {
  static constexpr std::uint64_t native_id = native_id_of("roster::opencl::native/1");
  static constexpr std::string_view backend = "opencl";
  /// The handles behind one roster buffer (roster::native_buffer<roster::opencl::native>(dev, buf)).
  struct buffer {
    cl_mem mem = nullptr;  ///< CL_MEM_READ_WRITE, exactly elements * size_of(type) bytes, offset 0
    element_type type = element_type::f32;
    std::size_t elements = 0;
  };

  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;      ///< holds this device alone
  cl_command_queue queue = nullptr;  ///< in order, profiling on: every program, upload and download runs on it
};

}  // namespace roster::opencl
