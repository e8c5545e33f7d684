// A stand-in for the NVIDIA driver's library libcuda.so.1 that reports CUDA
// 12.2, older than the CUDA runtime roster is built with. The runtime asks a
// driver for its entry points through cuGetProcAddress; this one answers the
// few the runtime needs to learn the driver's version, and nothing else, so
// the runtime refuses it as an old driver (cudaErrorInsufficientDriver). For
// tests/backends/cuda_driver_test.cpp's OldDriver cases only.

#include <cstring>

#define STUB_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
using result = int;  // CUresult: 0 is CUDA_SUCCESS
constexpr result success = 0, not_found = 500;
}  // namespace

STUB_EXPORT result cuDriverGetVersion(int* version) {
  *version = 12020;
  return success;
}

STUB_EXPORT result cuInit(unsigned) { return success; }

STUB_EXPORT result cuGetExportTable(const void** table, const void*) {
  *table = nullptr;
  return not_found;
}

STUB_EXPORT result cuGetProcAddress_v2(const char* symbol, void** fn, int, unsigned long long, int* status) {
  void* found = nullptr;
  if (std::strcmp(symbol, "cuDriverGetVersion") == 0) found = reinterpret_cast<void*>(&cuDriverGetVersion);
  else if (std::strcmp(symbol, "cuInit") == 0) found = reinterpret_cast<void*>(&cuInit);
  else if (std::strcmp(symbol, "cuGetProcAddress") == 0) found = reinterpret_cast<void*>(&cuGetProcAddress_v2);
  else if (std::strcmp(symbol, "cuGetExportTable") == 0) found = reinterpret_cast<void*>(&cuGetExportTable);
  *fn = found;
  if (status != nullptr) *status = found != nullptr ? 0 : 1;  // CU_GET_PROC_ADDRESS_SUCCESS or _SYMBOL_NOT_FOUND
  return found != nullptr ? success : not_found;
}

STUB_EXPORT result cuGetProcAddress(const char* symbol, void** fn, int version, unsigned long long flags) {
  return cuGetProcAddress_v2(symbol, fn, version, flags, nullptr);
}
