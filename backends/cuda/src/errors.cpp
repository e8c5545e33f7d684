// CUDA runtime errors as roster errors (errors.hpp) and the public
// roster::cuda::make_cuda_error.

#include "errors.hpp"

namespace roster::cuda {

namespace detail {

errc category_of(cudaError_t e) noexcept {
  switch (e) {
    case cudaErrorMemoryAllocation: return errc::out_of_memory;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorSystemNotReady:
    case cudaErrorDevicesUnavailable:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInitializationError: return errc::unavailable;
    case cudaErrorInvalidDevice: return errc::not_found;
    default: return errc::device_fault;
  }
}

std::string fix_for(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return "allocate fewer or smaller buffers, or release buffers you no longer need";
    case cudaErrorInsufficientDriver:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
      return "install the NVIDIA driver for CUDA " + std::to_string(CUDART_VERSION / 1000) + " or newer, " +
             std::string(exclude_fix);
    case cudaErrorNoDevice:
      return "check nvidia-smi and CUDA_VISIBLE_DEVICES, " + std::string(exclude_fix);
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return "rebuild roster with this card's architecture in its list (meson configure -Dnvcc_arch=..., "
             "e.g. 80 for an A100; empty: every one nvcc builds for), " + std::string(exclude_fix);
    case cudaErrorCooperativeLaunchTooLarge:
      return "run with ROSTER_CUDA_GRID_SYNC=split, or report the card and driver to roster's maintainers";
    default:
      return "a kernel or the card faulted and the CUDA context is unusable: restart the process; run it under "
             "compute-sanitizer to find the cause, " + std::string(exclude_fix);
  }
}

roster::error cuda_failure(cudaError_t e, std::string_view spec, std::string_view what) {
  return make_cuda_error(static_cast<int>(e), std::string(spec) + ": " + std::string(what), fix_for(e));
}

}  // namespace detail

error make_cuda_error(int cuda_code, std::string_view what, std::string_view fix) {
  const auto e = static_cast<cudaError_t>(cuda_code);
  const char* name = cudaGetErrorName(e);
  const char* text = cudaGetErrorString(e);
  std::string msg(what);
  msg += ": ";
  msg += text != nullptr ? text : "unknown error";
  msg += " (";
  msg += name != nullptr ? name : "cudaError?";
  msg += ", " + std::to_string(cuda_code) + ")";
  return error(detail::category_of(e), msg, fix);
}

}  // namespace roster::cuda
