#pragma once
// Private: the process-wide hub's state, shared by the inventory's
// out-of-line code (inventory-inl.hpp) and the plugin loader's check that a
// plugin joined this hub (plugin_hub.hpp).

#include <roster/detail/inventory/inventory_hub.hpp>
#include <roster/detail/inventory/platform/object_format.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace roster::detail {

/// One module that carries an inventory, in the hub's list (its rank).
struct module_entry {
  const record* begin;
  const record* end;
  module_node* node;
  std::uintptr_t base;  // ELF: dlpi_addr (link_map::l_addr); PE: the HMODULE; Mach-O: its mach_header
  const void* tag;      // ELF: dlpi_name (link_map::l_name), which tells apart modules at one base
};

struct hub {
  hub_mutex mutex;  // serialises collection, module events and detach
  inventory_slot* slots = nullptr;
  const snapshot* retired = nullptr;
  std::uint64_t generation = 0;
  std::atomic<std::uint64_t> collections{0};
  // The modules that carry an inventory, in rank order, as of `registry`;
  // kept in static storage up to its size so a collection allocates only
  // its snapshot, on the heap beyond.
  static constexpr std::size_t inline_modules = 64;
  module_entry inline_list[inline_modules] = {};
  module_entry* list = nullptr;
  std::size_t capacity = 0;
  std::size_t count = 0;
  bool known = false;  // false: walk the modules again at the next collection
  module_registry registry;
};

/// Returns what a 32-bit PC-relative field (a record's, a note's) points at.
template <class To>
inline To* at_offset(const void* field) noexcept {
  std::int32_t off;
  std::memcpy(&off, field, sizeof off);
  return reinterpret_cast<To*>(reinterpret_cast<std::uintptr_t>(field) + static_cast<std::intptr_t>(off));
}

/// Returns the process-wide hub: default visibility, so every module shares
/// the one in libroster (or, header-only, the executable's).
ROSTER_API ROSTER_INLINE hub& the_hub() noexcept;

}  // namespace roster::detail
