// A stand-in for the NVIDIA driver's library libcuda.so.1 that reports CUDA
// 12.2, older than the CUDA 13 toolkit that built roster's kernels. roster
// opens it and calls cuInit and cuDriverGetVersion, then refuses it as an
// old driver; the CUDA runtime (tests that link it) asks for its entry points
// through cuGetProcAddress and refuses it too. It answers those few and
// nothing else. For tests/backends/cuda_driver_test.cpp's OldDriver cases and
// backends_messages_cuda_old_driver only.

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
