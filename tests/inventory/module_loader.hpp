#pragma once
// The inventory tests' loader calls, one spelling for dlopen (ELF, Mach-O)
// and LoadLibrary (Windows), so one test body checks both.

#include <string>

#if defined(_WIN32)
#  include <windows.h>
#else
#  include <dlfcn.h>
#endif

namespace inv_test {

/// Opens a module (dlopen RTLD_NOW | RTLD_LOCAL, LoadLibrary); null on failure.
inline void* open_module(const char* path) {
#if defined(_WIN32)
  return reinterpret_cast<void*>(LoadLibraryA(path));
#else
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
}

/// Closes a module; true on success.
inline bool close_module(void* handle) {
#if defined(_WIN32)
  return FreeLibrary(reinterpret_cast<HMODULE>(handle)) != 0;
#else
  return dlclose(handle) == 0;
#endif
}

/// Returns a symbol of a module, or null.
inline void* module_symbol(void* handle, const char* name) {
#if defined(_WIN32)
  return reinterpret_cast<void*>(GetProcAddress(reinterpret_cast<HMODULE>(handle), name));
#else
  return dlsym(handle, name);
#endif
}

/// Returns whether the module is still mapped, without loading it.
inline bool module_loaded(const char* path) {
#if defined(_WIN32)
  return GetModuleHandleA(path) != nullptr;
#else
  void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return false;
  dlclose(h);
  return true;
#endif
}

/// Returns the base of the module an address lies in, or null.
inline const void* module_base_of(const void* address) {
#if defined(_WIN32)
  HMODULE m = nullptr;
  if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                          static_cast<const char*>(address), &m))
    return nullptr;
  return m;
#else
  Dl_info where{};
  return dladdr(address, &where) != 0 ? where.dli_fbase : nullptr;
#endif
}

/// Returns the loader's last error as text.
inline std::string module_error() {
#if defined(_WIN32)
  return "Windows error " + std::to_string(GetLastError());
#else
  const char* e = dlerror();
  return e != nullptr ? e : "no loader error";
#endif
}

}  // namespace inv_test
