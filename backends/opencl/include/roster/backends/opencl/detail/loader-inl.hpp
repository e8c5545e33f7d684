#pragma once
// The ICD loader (dlopen), its function table, and the errors of failed
// OpenCL calls.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/loader.hpp>

#include <roster/env.hpp>

#include <dlfcn.h>

#include <string>

namespace roster::opencl::detail {

ROSTER_INLINE void open_loader(cl_loader& l) {
  // ROSTER_OPENCL_LOADER names the loader to use instead of the system's.
  // roster::env::library refuses a folder, a FIFO, a device or a socket
  // before dlopen sees it: dlopen would wait for ever on a FIFO.
  auto chosen = env::library("ROSTER_OPENCL_LOADER",
                             "point ROSTER_OPENCL_LOADER at the ICD loader's library file (e.g. "
                             "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1), or give a library name the dynamic linker "
                             "finds (libOpenCL.so.1), or unset it to use the system's loader");
  if (!chosen) {
    l.failure.emplace(std::move(chosen).error().prepend("opencl"));
    return;
  }
  const std::string name = *chosen ? std::move(**chosen) : std::string("libOpenCL.so.1");
  l.library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (l.library == nullptr) {
    const char* why = dlerror();
    l.failure.emplace(errc::unavailable,
                      "opencl: the OpenCL ICD loader " + env::printable(name) + " could not be loaded" +
                          (why != nullptr ? " (" + env::printable(why) + ")" : std::string()),
                      "install the ICD loader (Debian: ocl-icd-libopencl1) and a driver (pocl-opencl-icd for "
                      "the CPU, or the GPU vendor's), or point ROSTER_OPENCL_LOADER at a loader, " +
                          std::string(exclude_hint));
    return;
  }
  std::string lacking;
  auto& fn = l.fn;
#define ROSTER_IMPL_CL_LOAD(name)                                                   \
  fn.name = reinterpret_cast<decltype(&::name)>(dlsym(l.library, #name));         \
  if (fn.name == nullptr && std::string_view(#name) != "clCreateCommandQueueWithProperties") \
    lacking += (lacking.empty() ? "" : ", ") + std::string(#name);
  ROSTER_IMPL_CL_FNS(ROSTER_IMPL_CL_LOAD)
#undef ROSTER_IMPL_CL_LOAD
  if (!lacking.empty())
    l.failure.emplace(errc::unavailable, "opencl: the ICD loader " + env::printable(name) + " lacks " + lacking,
                      "install an OpenCL 1.2 or newer ICD loader (Debian: ocl-icd-libopencl1), " +
                          std::string(exclude_hint));
}


ROSTER_INLINE const cl_loader& loader() {
  static cl_loader* l = [] {
    auto* p = new cl_loader;  // never destroyed, see loader.hpp
    open_loader(*p);
    return p;
  }();
  return *l;
}

ROSTER_INLINE std::string_view status_name(cl_int status) noexcept {
  switch (status) {
#define ROSTER_IMPL_CL_STATUS(x) \
  case x: return #x;
    ROSTER_IMPL_CL_STATUS(CL_SUCCESS)
    ROSTER_IMPL_CL_STATUS(CL_DEVICE_NOT_FOUND)
    ROSTER_IMPL_CL_STATUS(CL_DEVICE_NOT_AVAILABLE)
    ROSTER_IMPL_CL_STATUS(CL_COMPILER_NOT_AVAILABLE)
    ROSTER_IMPL_CL_STATUS(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    ROSTER_IMPL_CL_STATUS(CL_OUT_OF_RESOURCES)
    ROSTER_IMPL_CL_STATUS(CL_OUT_OF_HOST_MEMORY)
    ROSTER_IMPL_CL_STATUS(CL_PROFILING_INFO_NOT_AVAILABLE)
    ROSTER_IMPL_CL_STATUS(CL_BUILD_PROGRAM_FAILURE)
    ROSTER_IMPL_CL_STATUS(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_VALUE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_DEVICE_TYPE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_PLATFORM)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_DEVICE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_CONTEXT)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_QUEUE_PROPERTIES)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_COMMAND_QUEUE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_MEM_OBJECT)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_BUILD_OPTIONS)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_PROGRAM)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_PROGRAM_EXECUTABLE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_KERNEL_NAME)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_KERNEL_DEFINITION)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_KERNEL)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_ARG_INDEX)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_ARG_VALUE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_ARG_SIZE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_KERNEL_ARGS)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_WORK_DIMENSION)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_WORK_GROUP_SIZE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_WORK_ITEM_SIZE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_GLOBAL_OFFSET)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_EVENT_WAIT_LIST)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_EVENT)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_OPERATION)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_BUFFER_SIZE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_GLOBAL_WORK_SIZE)
    ROSTER_IMPL_CL_STATUS(CL_INVALID_PROPERTY)
    ROSTER_IMPL_CL_STATUS(CL_PLATFORM_NOT_FOUND_KHR)
#undef ROSTER_IMPL_CL_STATUS
    default: return "cl_int";
  }
}

ROSTER_INLINE roster::error cl_failure(std::string_view where, std::string_view call, cl_int status) {
  const std::string what = std::string(where) + ": " + std::string(call) + " failed: " +
                           std::string(status_name(status)) + " (" + std::to_string(status) + ")";
  switch (status) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
      return roster::error(errc::out_of_memory, what,
                           "release buffers you no longer need or allocate smaller ones (roster-info lists the "
                           "adapter's memory)");
    case CL_OUT_OF_RESOURCES:
      // NVIDIA's driver also answers this for a kernel that faulted.
      return roster::error(errc::device_fault, what,
                           "free device memory, or if a kernel of yours ran before, check it for out-of-range "
                           "accesses; then open the device again");
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_DEVICE_NOT_FOUND:
    case CL_PLATFORM_NOT_FOUND_KHR:
    case CL_COMPILER_NOT_AVAILABLE:
      return roster::error(errc::unavailable, what,
                           "install the device's OpenCL driver (an ICD file in /etc/OpenCL/vendors, or a folder of "
                           "them in OCL_ICD_VENDORS), check that no other process holds the device exclusively, " +
                               std::string(exclude_hint));
    default:
      if (status > 0) {
        // Not an OpenCL code (OpenCL's errors are negative): NVIDIA's driver
        // passes on the CUDA driver's own, e.g. 223 when CUDA_DISABLE_PTX_JIT=1
        // turns off the JIT its OpenCL compiler runs through.
        const bool jit_off = status == 223;
        return roster::error(errc::unavailable,
                             what + ": not an OpenCL code (OpenCL's errors are negative) but the driver's own" +
                                 (jit_off ? "; NVIDIA's OpenCL passes CUDA's 223, CUDA_ERROR_JIT_COMPILATION_DISABLED"
                                          : ""),
                             jit_off ? "unset CUDA_DISABLE_PTX_JIT (NVIDIA's OpenCL compiles its kernels through the "
                                       "driver's PTX JIT), " + std::string(exclude_hint)
                                     : "look the code up in the vendor's driver (NVIDIA's: cuda.h's CUresult), " +
                                           std::string(exclude_hint));
      }
      return roster::error(errc::device_fault, what,
                           "report it as a roster bug with the driver version (roster-info lists it), " +
                               std::string(exclude_hint));
  }
}

}  // namespace roster::opencl::detail
