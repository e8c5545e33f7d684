#pragma once
// Private: the part of the CUDA driver API the backend calls, declared here
// (no cuda.h needed) and opened at run time from libcuda.so.1, the driver's
// own library: roster links neither cudart nor libcuda. The types are the
// driver's: a CUstream is a cudaStream_t, a CUcontext the runtime's
// context, a CUdeviceptr a device pointer.

#include <roster/backends/cuda/native.hpp>

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>

// The driver's handle types, declared as cuda.h declares them.
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;

namespace roster::cuda::detail {

using cu_result = int;  // CUresult
using cu_device = int;  // CUdevice
using cu_deviceptr = unsigned long long;  // CUdeviceptr
using cu_context = ::CUctx_st*;
using cu_stream = ::CUstream_st*;
using cu_event = ::CUevent_st*;
using cu_module = ::CUmod_st*;
using cu_function = ::CUfunc_st*;

/// The driver's codes the backend names itself (cuda.h's CUresult values).
enum cu_code : int {
  cu_success = 0,
  cu_invalid_value = 1,
  cu_out_of_memory = 2,
  cu_not_initialized = 3,
  cu_stub_library = 34,
  cu_call_requires_newer_driver = 36,
  cu_device_unavailable = 46,
  cu_no_device = 100,
  cu_invalid_device = 101,
  cu_invalid_image = 200,
  cu_no_binary_for_gpu = 209,
  cu_invalid_ptx = 218,
  cu_jit_compiler_not_found = 221,
  cu_unsupported_ptx_version = 222,
  cu_not_found = 500,
  cu_illegal_address = 700,
  cu_launch_out_of_resources = 701,
  cu_launch_failed = 719,
  cu_cooperative_launch_too_large = 720,
  cu_system_not_ready = 802,
  cu_system_driver_mismatch = 803,
  cu_compat_not_supported_on_device = 804,
};

/// The device attributes the backend reads (CUdevice_attribute).
enum cu_attribute : int {
  cu_attr_multiprocessor_count = 16,
  cu_attr_integrated = 18,
  cu_attr_pci_bus_id = 33,
  cu_attr_pci_device_id = 34,
  cu_attr_pci_domain_id = 50,
  cu_attr_compute_capability_major = 75,
  cu_attr_compute_capability_minor = 76,
  cu_attr_cooperative_launch = 95,
};

/// CUfunction_attribute values roster reads (cuda.h's numbers).
enum : int {
  cu_func_ptx_version = 5,     // CU_FUNC_ATTRIBUTE_PTX_VERSION: the PTX the function's code came from, 10 x major + minor
  cu_func_binary_version = 6,  // CU_FUNC_ATTRIBUTE_BINARY_VERSION: the SASS it runs, 10 x major + minor
};

inline constexpr unsigned cu_stream_non_blocking = 1;  // CU_STREAM_NON_BLOCKING

/// The driver's entry points, null where the library lacks one.
struct driver_api {
  void* library = nullptr;  ///< dlopen("libcuda.so.1"); null when it does not load
  cu_result (*cuInit)(unsigned) = nullptr;
  cu_result (*cuDriverGetVersion)(int*) = nullptr;
  cu_result (*cuGetErrorName)(cu_result, const char**) = nullptr;
  cu_result (*cuGetErrorString)(cu_result, const char**) = nullptr;
  cu_result (*cuDeviceGetCount)(int*) = nullptr;
  cu_result (*cuDeviceGet)(cu_device*, int) = nullptr;
  cu_result (*cuDeviceGetName)(char*, int, cu_device) = nullptr;
  cu_result (*cuDeviceGetAttribute)(int*, int, cu_device) = nullptr;
  cu_result (*cuDeviceGetUuid)(unsigned char*, cu_device) = nullptr;  // CUuuid: 16 bytes
  cu_result (*cuDeviceTotalMem)(std::size_t*, cu_device) = nullptr;
  cu_result (*cuDevicePrimaryCtxRetain)(cu_context*, cu_device) = nullptr;
  cu_result (*cuDevicePrimaryCtxRelease)(cu_device) = nullptr;
  cu_result (*cuCtxSetCurrent)(cu_context) = nullptr;
  cu_result (*cuCtxGetCurrent)(cu_context*) = nullptr;
  cu_result (*cuMemAlloc)(cu_deviceptr*, std::size_t) = nullptr;
  cu_result (*cuMemFree)(cu_deviceptr) = nullptr;
  cu_result (*cuMemcpyHtoDAsync)(cu_deviceptr, const void*, std::size_t, cu_stream) = nullptr;
  cu_result (*cuMemcpyDtoHAsync)(void*, cu_deviceptr, std::size_t, cu_stream) = nullptr;
  cu_result (*cuStreamCreate)(cu_stream*, unsigned) = nullptr;
  cu_result (*cuStreamDestroy)(cu_stream) = nullptr;
  cu_result (*cuStreamSynchronize)(cu_stream) = nullptr;
  cu_result (*cuEventCreate)(cu_event*, unsigned) = nullptr;
  cu_result (*cuEventDestroy)(cu_event) = nullptr;
  cu_result (*cuEventRecord)(cu_event, cu_stream) = nullptr;
  cu_result (*cuEventSynchronize)(cu_event) = nullptr;
  cu_result (*cuEventElapsedTime)(float*, cu_event, cu_event) = nullptr;
  cu_result (*cuModuleLoadData)(cu_module*, const void*) = nullptr;
  cu_result (*cuModuleUnload)(cu_module) = nullptr;
  cu_result (*cuModuleGetFunction)(cu_function*, cu_module, const char*) = nullptr;
  cu_result (*cuLaunchKernel)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              cu_stream, void**, void**) = nullptr;
  cu_result (*cuLaunchCooperativeKernel)(cu_function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                         unsigned, cu_stream, void**) = nullptr;
  cu_result (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, cu_function, int, std::size_t) = nullptr;
  /// Optional (roster::kernels_loaded says less without it): which code a loaded function runs.
  cu_result (*cuFuncGetAttribute)(int*, int, cu_function) = nullptr;
  const char* missing = nullptr;  ///< the first entry point the library lacks, or null
};

/// Returns the symbol `name` of `lib` as a function pointer of type F, or
/// (where the driver has an older name) `fallback`'s.
template <class F>
inline void resolve(void* lib, F& fn, const char* name, const char* fallback, const char*& missing) {
  void* p = ::dlsym(lib, name);
  if (p == nullptr && fallback != nullptr) p = ::dlsym(lib, fallback);
  if (p == nullptr && missing == nullptr) missing = name;
  fn = reinterpret_cast<F>(p);
}

/// Opens libcuda.so.1 once per process (a function-local static) and returns
/// its entry points; `library` is null when it does not load. The `_v2`
/// names are the ones cuda.h maps the plain names to.
inline const driver_api& api() {
  static const driver_api table = [] {
    driver_api a;
    a.library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (a.library == nullptr) return a;
    void* l = a.library;
    const char*& m = a.missing;
    resolve(l, a.cuInit, "cuInit", nullptr, m);
    resolve(l, a.cuDriverGetVersion, "cuDriverGetVersion", nullptr, m);
    resolve(l, a.cuGetErrorName, "cuGetErrorName", nullptr, m);
    resolve(l, a.cuGetErrorString, "cuGetErrorString", nullptr, m);
    resolve(l, a.cuDeviceGetCount, "cuDeviceGetCount", nullptr, m);
    resolve(l, a.cuDeviceGet, "cuDeviceGet", nullptr, m);
    resolve(l, a.cuDeviceGetName, "cuDeviceGetName", nullptr, m);
    resolve(l, a.cuDeviceGetAttribute, "cuDeviceGetAttribute", nullptr, m);
    resolve(l, a.cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid", m);
    resolve(l, a.cuDeviceTotalMem, "cuDeviceTotalMem_v2", nullptr, m);
    resolve(l, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", nullptr, m);
    resolve(l, a.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", m);
    resolve(l, a.cuCtxSetCurrent, "cuCtxSetCurrent", nullptr, m);
    resolve(l, a.cuCtxGetCurrent, "cuCtxGetCurrent", nullptr, m);
    resolve(l, a.cuMemAlloc, "cuMemAlloc_v2", nullptr, m);
    resolve(l, a.cuMemFree, "cuMemFree_v2", nullptr, m);
    resolve(l, a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", nullptr, m);
    resolve(l, a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", nullptr, m);
    resolve(l, a.cuStreamCreate, "cuStreamCreate", nullptr, m);
    resolve(l, a.cuStreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy", m);
    resolve(l, a.cuStreamSynchronize, "cuStreamSynchronize", nullptr, m);
    resolve(l, a.cuEventCreate, "cuEventCreate", nullptr, m);
    resolve(l, a.cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy", m);
    resolve(l, a.cuEventRecord, "cuEventRecord", nullptr, m);
    resolve(l, a.cuEventSynchronize, "cuEventSynchronize", nullptr, m);
    resolve(l, a.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", m);
    resolve(l, a.cuModuleLoadData, "cuModuleLoadData", nullptr, m);
    resolve(l, a.cuModuleUnload, "cuModuleUnload", nullptr, m);
    resolve(l, a.cuModuleGetFunction, "cuModuleGetFunction", nullptr, m);
    resolve(l, a.cuLaunchKernel, "cuLaunchKernel", nullptr, m);
    resolve(l, a.cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", nullptr, m);
    resolve(l, a.cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor", nullptr,
            m);
    const char* optional = nullptr;  // not one the backend needs: never `missing`
    resolve(l, a.cuFuncGetAttribute, "cuFuncGetAttribute", nullptr, optional);
    return a;
  }();
  return table;
}

}  // namespace roster::cuda::detail
