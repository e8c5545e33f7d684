#pragma once
// Private: the process-wide hub that merges the per-module inventory sections.

#include <roster/config.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#define ROSTER_IMPL_SECTION_NAME "roster_inventory"

namespace roster { struct inventory_stats; }

namespace roster::detail {

/// One submission: what the section's pointer points at.
struct submission {
  std::uint64_t type;   // type_key<T>()
  const void* object;   // the submitted object
  const char* site;     // "file:line" of the ROSTER_SUBMIT
};

template <class T>
constexpr std::string_view type_name() noexcept {
  // GCC: "... [with T = ns::t; ...]", Clang: "... [T = ns::t]".
  std::string_view p = __PRETTY_FUNCTION__;
  auto b = p.find("T = ") + 4;
  auto e = p.find_first_of(";]", b);
  return p.substr(b, e - b);
}

// FNV-1a of the type's name: the same across modules and compilers.
template <class T>
constexpr std::uint64_t type_key() noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : type_name<T>()) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

/// One entry while a collection gathers and sorts them.
struct walk_entry {
  const void* object;
  const submission* sub;
  std::size_t module_rank;  // the module's place in the dynamic linker's list
};

// Function pointers rather than values: nvcc's front end cannot evaluate
// type_name<T>() in a constant initializer, and CUDA sources include this header.
struct entry_ops {
  std::uint64_t (*type)() noexcept;
  std::string_view (*name)() noexcept;
  void (*sort)(walk_entry* first, walk_entry* last) noexcept;
  bool (*same_key)(const void*, const void*) noexcept;
  bool keyed;
};

/// An immutable snapshot: header followed by `count` entry pointers, one allocation.
struct snapshot {
  std::size_t count;
  std::size_t duplicates;
  std::size_t conflicts;
  std::size_t modules;
  std::uint64_t collect_ns;
  std::uint64_t generation;
  const char* kept_site;
  const char* dropped_site;
  const snapshot* retired_next;  // snapshots are never freed: old spans stay readable
  const void* const* entries() const noexcept {
    return reinterpret_cast<const void* const*>(this + 1);
  }
};

/// Per-type state: the published snapshot, and a link in the hub's list.
struct inventory_slot {
  entry_ops ops;
  std::atomic<const snapshot*> current{nullptr};
  inventory_slot* next = nullptr;
  bool linked = false;
};

/// One module's section, linked into the hub while the module is loaded.
struct module_node {
  const submission* const* begin;
  const submission* const* end;
  module_node* next;
  bool attached;
};

ROSTER_API ROSTER_INLINE const snapshot* collect(inventory_slot& slot) noexcept;
ROSTER_API ROSTER_INLINE void attach_module(module_node& node) noexcept;
ROSTER_API ROSTER_INLINE void detach_module(module_node& node) noexcept;
/// Detaches the module of a dlopen handle before dlclose (unload_plugin);
/// returns its node (null when it submitted nothing), for attach_module.
ROSTER_API ROSTER_INLINE module_node* detach_module_of(void* handle) noexcept;
ROSTER_API ROSTER_INLINE std::uint64_t hub_collections() noexcept;
ROSTER_API ROSTER_INLINE inventory_stats stats_of(const inventory_slot& slot) noexcept;
/// Drops and frees every snapshot so the next call collects again; for
/// benchmarks only: no span handed out before may be used afterwards.
ROSTER_API ROSTER_INLINE void invalidate_for_testing() noexcept;

}  // namespace roster::detail

// __start_/__stop_ exist per link unit: weak (a module may have no entries)
// and hidden (each module must see its own section, not the first loaded one).
extern "C" {
extern const roster::detail::submission* const __start_roster_inventory[]
    __attribute__((weak, visibility("hidden")));
extern const roster::detail::submission* const __stop_roster_inventory[]
    __attribute__((weak, visibility("hidden")));
}

namespace roster::detail {

// Hidden: one node per module. With default visibility the dynamic linker
// would unify the node across modules and only the first would register.
ROSTER_IMPL_HIDDEN inline module_node& this_module() noexcept {
  static constinit module_node node{nullptr, nullptr, nullptr, false};
  return node;
}

ROSTER_IMPL_HIDDEN inline void register_this_module() noexcept {
  auto& node = this_module();
  if (node.attached || __start_roster_inventory == nullptr) return;
  node.begin = __start_roster_inventory;
  node.end = __stop_roster_inventory;
  attach_module(node);
}

ROSTER_IMPL_HIDDEN inline void unregister_this_module() noexcept {
  auto& node = this_module();
  if (node.attached) detach_module(node);
}

}  // namespace roster::detail
