#pragma once
// Private: what the ELF and Mach-O module walks share, through dladdr.
// Included by elf_modules.hpp and macho_modules.hpp only.

#include <roster/detail/inventory/inventory_hub_state.hpp>

#include <dlfcn.h>

namespace roster::detail {

/// Returns whether `address` lies in the module (image) that holds `node`;
/// called with the hub locked, from the unloading module's hook or callback.
inline bool in_module_of(const void* address, const module_node& node) noexcept {
  Dl_info self{}, where{};
  if (dladdr(&node, &self) == 0 || self.dli_fbase == nullptr) return false;
  return dladdr(address, &where) != 0 && where.dli_fbase == self.dli_fbase;
}

}  // namespace roster::detail
