#pragma once
/// The CUDA backend's native handles: the device's primary context and
/// stream and the device memory behind a buffer, for a user's own kernels
/// between roster's programs. <roster/backends/cuda.hpp> includes it; the
/// ordering contract is in docs/native.md.

#include <roster/native.hpp>
#include <roster/program.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

// The CUDA API's own handle types, declared as cuda.h and driver_types.h
// declare them (CUcontext is CUctx_st*, cudaStream_t and CUstream are
// CUstream_st*), so this header needs no CUDA header.
struct CUctx_st;
struct CUstream_st;

namespace roster::cuda {

/// The handles behind a CUDA device (roster::native<roster::cuda::native>(dev)).
/// roster owns them: do not destroy the stream or release the context. Every
/// program, upload and download of the device runs in order on `stream`, so
/// work a user puts on it is ordered with roster's, and synchronize() waits
/// for it (docs/native.md). Getting them makes the device's primary context
/// current on the calling thread (as cudaSetDevice(ordinal) does), as a
/// launch on `stream` needs.
struct native {
  static constexpr std::uint64_t native_id = native_id_of("roster::cuda::native/1");
  static constexpr std::string_view backend = "cuda";
  /// The memory behind one roster buffer (roster::native_buffer<roster::cuda::native>(dev, buf)).
  struct buffer {
    void* pointer = nullptr;  ///< device memory (a CUdeviceptr) from cuMemAlloc, valid until the buffer is released
    element_type type = element_type::f64;
    std::size_t size = 0;     ///< elements
  };

  int ordinal = 0;                ///< the device ordinal (after CUDA_VISIBLE_DEVICES), the runtime's too: cudaSetDevice(ordinal)
  ::CUctx_st* context = nullptr;  ///< CUcontext: the device's primary context, which the runtime shares
  ::CUstream_st* stream = nullptr;  ///< cudaStream_t: roster's stream (non-blocking), on which all its work runs
};

}  // namespace roster::cuda
