#pragma once
// Private: CUDA driver errors as roster errors (errors.hpp) and the public
// roster::cuda::make_cuda_error.

#include <roster/backends/cuda/detail/driver_api.hpp>
#include <roster/backends/cuda/detail/errors.hpp>
#include <roster/backends/cuda/detail/module.hpp>

#include <string>

namespace roster::cuda {

namespace detail {

ROSTER_INLINE errc category_of(int e) noexcept {
  switch (e) {
    case cu_out_of_memory: return errc::out_of_memory;
    case cu_not_initialized:
    case cu_stub_library:
    case cu_no_device:
    case cu_call_requires_newer_driver:
    case cu_device_unavailable:
    case cu_system_driver_mismatch:
    case cu_system_not_ready:
    case cu_compat_not_supported_on_device:
    case cu_no_binary_for_gpu:
    case cu_invalid_image:
    case cu_invalid_ptx:
    case cu_jit_compiler_not_found:
    case cu_unsupported_ptx_version: return errc::unavailable;
    case cu_invalid_device: return errc::not_found;
    default: return errc::device_fault;
  }
}

ROSTER_INLINE std::string fix_for(int e) {
  switch (e) {
    case cu_out_of_memory:
      return "allocate fewer or smaller buffers, or release buffers you no longer need";
    case cu_call_requires_newer_driver:
    case cu_system_driver_mismatch:
    case cu_stub_library:
      return "install the NVIDIA driver for CUDA " + std::to_string(kernels_cuda_version() / 1000) + " or newer, " +
             std::string(exclude_fix);
    case cu_no_device:
      return "check nvidia-smi and CUDA_VISIBLE_DEVICES, " + std::string(exclude_fix);
    case cu_no_binary_for_gpu:
    case cu_invalid_image:
    case cu_invalid_ptx:
    case cu_unsupported_ptx_version:
      return "regenerate the kernels' image with this card's architecture in its list (meson configure "
             "-Dnvcc_arch=..., e.g. 80 for an A100, with nvcc; or scripts/regen-cuda-fatbin --arch ...), or update "
             "the NVIDIA driver, " + std::string(exclude_fix);
    case cu_cooperative_launch_too_large:
      return "run with ROSTER_CUDA_GRID_SYNC=split, or report the card and driver to roster's maintainers";
    default:
      return "a kernel or the card faulted and the CUDA context is unusable: restart the process; run it under "
             "compute-sanitizer to find the cause, " + std::string(exclude_fix);
  }
}

ROSTER_INLINE roster::error cuda_failure(int e, std::string_view spec, std::string_view what) {
  return make_cuda_error(e, std::string(spec) + ": " + std::string(what), fix_for(e));
}

// The names of the codes roster meets before the driver can name them (no
// libcuda.so.1, or one that does not answer).
inline const char* code_name(int e) noexcept {
  switch (e) {
    case cu_success: return "CUDA_SUCCESS";
    case cu_out_of_memory: return "CUDA_ERROR_OUT_OF_MEMORY";
    case cu_not_initialized: return "CUDA_ERROR_NOT_INITIALIZED";
    case cu_no_device: return "CUDA_ERROR_NO_DEVICE";
    case cu_illegal_address: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case cu_launch_failed: return "CUDA_ERROR_LAUNCH_FAILED";
    default: return nullptr;
  }
}

}  // namespace detail

ROSTER_INLINE error make_cuda_error(int cuda_code, std::string_view what, std::string_view fix) {
  const detail::driver_api& cu = detail::api();
  const char* name = nullptr;
  const char* text = nullptr;
  if (cu.cuGetErrorName == nullptr || cu.cuGetErrorName(cuda_code, &name) != detail::cu_success) name = nullptr;
  if (cu.cuGetErrorString == nullptr || cu.cuGetErrorString(cuda_code, &text) != detail::cu_success) text = nullptr;
  if (name == nullptr) name = detail::code_name(cuda_code);
  std::string msg(what);
  msg += ": ";
  msg += text != nullptr ? text : "the CUDA driver's error";
  msg += " (";
  msg += name != nullptr ? name : "CUresult";
  msg += ", " + std::to_string(cuda_code) + ")";
  return error(detail::category_of(cuda_code), msg, fix);
}

}  // namespace roster::cuda
