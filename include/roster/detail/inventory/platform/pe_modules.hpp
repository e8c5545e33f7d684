#pragma once
// Private: the PE/COFF module walk (the section and the hook are in pe.hpp).
// Included by the inventory's out-of-line code only.
//
// The modules are the ones whose hook registered them (pe.hpp), so a
// collection calls nothing of the loader's: it never waits on the loader
// lock, under which a DLL's hook runs and waits on the hub's mutex. That wait
// is what holds a FreeLibrary back until no collection reads the DLL. The
// rank of a module: the EXE first, then the DLLs in registration order. The
// image's headers are read at the offsets the PE format fixes, so this file
// needs no <windows.h> (whose min and max macros would reach header-only
// users).

#include <roster/detail/inventory/inventory_hub_state.hpp>
#include <roster/detail/inventory/platform/pe.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

namespace roster::detail {

// The PE headers of a mapped image: the DOS header's e_lfanew (at 0x3c) gives
// the NT headers: "PE\0\0", the COFF file header (Characteristics at +18),
// then the optional header (SizeOfImage at +56 in PE32 and PE32+ alike).
inline std::uint32_t pe_field(const void* image, std::size_t offset_in_nt) noexcept {
  const auto* base = static_cast<const unsigned char*>(image);
  std::uint32_t lfanew, value = 0;
  std::memcpy(&lfanew, base + 0x3c, sizeof lfanew);
  std::memcpy(&value, base + lfanew + offset_in_nt, sizeof value);
  return value;
}

inline bool pe_is_dll(const void* image) noexcept {
  constexpr std::uint32_t image_file_dll = 0x2000;
  return (pe_field(image, 4 + 18) & 0xffffu & image_file_dll) != 0;
}

inline std::uintptr_t pe_image_size(const void* image) noexcept { return pe_field(image, 4 + 20 + 56); }

/// Brings the hub's module list up to date; called with the hub locked.
/// Returns false when memory for a list beyond hub::inline_modules ran out.
inline bool refresh_modules(hub& h) noexcept {
  if (h.known) return true;
  std::size_t n = 0;
  for (module_node* m = h.registry.first; m != nullptr; m = m->next) ++n;
  if (h.list == nullptr) {
    h.list = h.inline_list;
    h.capacity = hub::inline_modules;
  }
  if (n > h.capacity) {
    auto* bigger = static_cast<module_entry*>(::operator new(n * 2 * sizeof(module_entry), std::nothrow));
    if (bigger == nullptr) return false;
    if (h.list != h.inline_list) ::operator delete(h.list);
    h.list = bigger;
    h.capacity = n * 2;
  }
  h.count = 0;
  for (const bool dlls : {false, true})
    for (module_node* m = h.registry.first; m != nullptr; m = m->next)
      if (pe_is_dll(m->image) == dlls)
        h.list[h.count++] = module_entry{m->begin, m->end, m, reinterpret_cast<std::uintptr_t>(m->image), nullptr};
  h.known = true;
  return true;
}

/// Registers a module whose hook ran, at the end of the list; called with
/// the hub locked.
inline void module_loaded(hub& h, module_node& node) noexcept {
  module_node** at = &h.registry.first;
  while (*at != nullptr) at = &(*at)->next;
  node.next = nullptr;
  *at = &node;
}

/// Forgets an unloading module; called with the hub locked.
inline void module_unloading(hub& h, module_node& node) noexcept {
  for (module_node** at = &h.registry.first; *at != nullptr; at = &(*at)->next)
    if (*at == &node) {
      *at = node.next;
      break;
    }
}

/// Returns whether `address` lies in the image that holds `node`.
inline bool in_module_of(const void* address, const module_node& node) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(address), base = reinterpret_cast<std::uintptr_t>(node.image);
  return a >= base && a - base < pe_image_size(node.image);
}

/// Returns the node of the module behind an HMODULE (its image base), or null.
inline module_node* module_of_handle(hub& h, void* handle) noexcept {
  std::lock_guard lock(h.mutex);
  for (module_node* m = h.registry.first; m != nullptr; m = m->next)
    if (m->image == handle) return m;
  return nullptr;
}

/// Readies the walk before a collection takes the hub's lock: nothing on PE.
inline void prepare_module_walk(hub&) noexcept {}

}  // namespace roster::detail
