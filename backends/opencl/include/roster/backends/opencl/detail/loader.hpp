#pragma once
// Included after <roster/backends/opencl.hpp>, by the backend's -inl files.
// Private: the ICD loader. It is dlopen'ed at first use and every entry point
// the backend calls goes through one function table, so a program linked with
// this backend starts (and the backend lists nothing, saying why) on a host
// without libOpenCL.so.1.

#if !defined(CL_TARGET_OPENCL_VERSION)
#  define CL_TARGET_OPENCL_VERSION 300
#endif
// clCreateCommandQueue serves platforms older than 2.0 (the loader has both).
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <roster/error.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace roster::opencl::detail {

// Every entry point the backend calls, looked up in the loader by name.
#define ROSTER_IMPL_CL_FNS(X)       \
  X(clGetPlatformIDs)               \
  X(clGetPlatformInfo)              \
  X(clGetDeviceIDs)                 \
  X(clGetDeviceInfo)                \
  X(clCreateContext)                \
  X(clReleaseContext)               \
  X(clCreateCommandQueue)           \
  X(clCreateCommandQueueWithProperties) \
  X(clReleaseCommandQueue)          \
  X(clCreateBuffer)                 \
  X(clReleaseMemObject)             \
  X(clEnqueueWriteBuffer)           \
  X(clEnqueueReadBuffer)            \
  X(clCreateProgramWithSource)      \
  X(clBuildProgram)                 \
  X(clGetProgramBuildInfo)          \
  X(clReleaseProgram)               \
  X(clCreateKernel)                 \
  X(clReleaseKernel)                \
  X(clSetKernelArg)                 \
  X(clGetKernelInfo)                \
  X(clGetKernelArgInfo)             \
  X(clGetKernelWorkGroupInfo)       \
  X(clEnqueueNDRangeKernel)         \
  X(clFlush)                        \
  X(clFinish)                       \
  X(clGetEventProfilingInfo)        \
  X(clReleaseEvent)

#define ROSTER_IMPL_CL_MEMBER(name) decltype(&::name) name = nullptr;

struct cl_fns {
  ROSTER_IMPL_CL_FNS(ROSTER_IMPL_CL_MEMBER)
};

// The loaded loader: opened once, never closed (devices cached in other
// statics may outlive any destructor order).
struct cl_loader {
  void* library = nullptr;
  cl_fns fn;
  // Set when there is no loader or it lacks an entry point: enumerate()
  // lists nothing and open() returns this error.
  std::optional<roster::error> failure;
};

/// Returns the loader, opening it on first use (ROSTER_OPENCL_LOADER names
/// another library than libOpenCL.so.1).
const cl_loader& loader();

/// Returns the function table; call only after loader() reported no failure.
inline const cl_fns& fn() { return loader().fn; }

/// The part of a fix that names the way out: exclude the backend.
inline constexpr std::string_view exclude_hint = "or exclude the backend with ROSTER_DEVICE_SELECTOR='!opencl:*'";

/// Returns the name of an OpenCL status code, e.g. "CL_OUT_OF_RESOURCES".
std::string_view status_name(cl_int status) noexcept;

/// Turns a failed call into an error naming the call and the status ("CL_..."
/// and its number), with a fix that fits the status.
roster::error cl_failure(std::string_view where, std::string_view call, cl_int status);

// Calls OpenCL function `name` with the arguments that follow and returns
// cl_failure(where, "name", status) from the enclosing function on failure.
#define ROSTER_IMPL_CL_CALL(where, name, ...)                                                          \
  do {                                                                                                 \
    if (const cl_int roster_cl_status_ = ::roster::opencl::detail::fn().name(__VA_ARGS__);             \
        roster_cl_status_ != CL_SUCCESS)                                                               \
      return ::roster::opencl::detail::cl_failure(where, #name, roster_cl_status_);                    \
  } while (0)

}  // namespace roster::opencl::detail
