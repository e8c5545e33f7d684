// A user's own CUDA kernel for tests/backends/cuda_native_test.cpp, compiled
// by nvcc with no roster header: the test passes it roster's stream and
// device pointers from the native handles.
#include <cuda.h>
#include <cuda_runtime.h>

namespace {

// y[i] = s * y[i] + x[i] + i % 7
__global__ void scale_add(double* y, const double* x, double s, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)
    y[i] = s * y[i] + x[i] + static_cast<double>(i % 7);
}

}  // namespace

// Launches the kernel on `stream`; returns the cudaError_t of the launch.
extern "C" int roster_test_scale_add(double* y, const double* x, double s, unsigned long long n, void* stream) {
  const unsigned long long want = (n + 255) / 256;
  const unsigned blocks = static_cast<unsigned>(want < 4096 ? (want == 0 ? 1 : want) : 4096);
  scale_add<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(y, x, s, n);
  return static_cast<int>(cudaGetLastError());
}

// Returns the context of `stream` through the driver's cuStreamGetCtx (found
// through the runtime, so nothing links libcuda), or null.
extern "C" void* roster_test_stream_context(void* stream) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuStreamGetCtx", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr)
    return nullptr;
  CUcontext ctx = nullptr;
  if (reinterpret_cast<CUresult (*)(CUstream, CUcontext*)>(fn)(static_cast<CUstream>(stream), &ctx) != CUDA_SUCCESS)
    return nullptr;
  return ctx;
}

// Returns the device ordinal that owns a device pointer, or -1.
extern "C" int roster_test_pointer_device(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess || a.type != cudaMemoryTypeDevice) return -1;
  return a.device;
}

// Returns the context the runtime makes current on this thread for device
// `ordinal` (cudaSetDevice, then cudaFree(0), which starts it), through the
// driver's cuCtxGetCurrent; null on failure.
extern "C" void* roster_test_runtime_context(int ordinal) {
  if (cudaSetDevice(ordinal) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) return nullptr;
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr)
    return nullptr;
  CUcontext ctx = nullptr;
  if (reinterpret_cast<CUresult (*)(CUcontext*)>(fn)(&ctx) != CUDA_SUCCESS) return nullptr;
  return ctx;
}
