#pragma once
// Private: what the inventory's collection works on, whatever the object
// format: the record the section holds, the per-type slot, the snapshot, and
// the hub's entry points. Everything that names a section, a start/stop
// marker or a module walk is in detail/platform/, one file per format.
//
// How it works, and why it costs nothing at start-up:
//
// - Each ROSTER_SUBMIT adds one 16-byte record to the inventory section: the
//   type's key, then two 32-bit PC-relative offsets (`.long target - .`, as
//   the Linux kernel's relative exception tables): one to a two-instruction
//   getter that returns the object's address, one to the "file:line" string.
//   The linker resolves every offset, so the section is read-only data with
//   no load-time relocation and no code run per entry; its pages stay clean
//   until the first collection reads them.
// - Why a getter and not an offset to the object itself: a default-visibility
//   object in a shared library (an inline variable, registration_of<B>) may
//   be interposed, so neither the compiler ("i" constraint) nor the linker
//   (R_X86_64_PC32 in a shared object) accepts a link-time offset to it. The
//   getter's `return &object` lets the compiler pick `lea` when the object
//   binds locally (no relocation) and a GOT load when it may be interposed
//   (that relocation is the user's, and it yields the address every module
//   agrees on). The collection calls each getter once.
// - Each module (executable, shared object, DLL, dylib) carries its own
//   section, bounded by its own markers, and one module_node; how the hub
//   finds them is the format's (detail/platform/). After the freeze a lookup
//   is one acquire load, which cannot see a module come or go: the format's
//   per-module hook, or its loader's callback, drops the published snapshots
//   so the next lookup collects again, and holds an unloading module mapped
//   until no collection is reading it. It is one call per module, never per
//   entry.

#include <roster/config.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace roster { struct inventory_stats; }

namespace roster::detail {

/// One submission as the section holds it: 16 bytes, no pointer.
struct record {
  std::uint32_t type_lo;  // type_key<T>(), low half
  std::uint32_t type_hi;  // high half
  std::int32_t getter;    // getter - &getter: returns the object (null: a condition was false)
  std::int32_t site;      // site - &site: "file:line" of the ROSTER_SUBMIT
};
static_assert(sizeof(record) == 16);

using object_getter = const void* (*)() noexcept;

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

// The key's halves as signed 32-bit constants: GCC prints an "i" operand
// with %c only when it fits a signed 32-bit displacement.
template <class T, int half>
struct type_key_half {
  static constexpr std::int32_t value = static_cast<std::int32_t>(
      static_cast<std::uint32_t>(type_key<T>() >> (32 * half)));
};

/// One entry while a collection gathers and sorts them.
struct walk_entry {
  const void* object;
  const char* site;
  std::size_t module_rank;  // the module's place in the hub's module list
  std::uint64_t key_bits;   // an integral key, order-preserving, filled by the sort
};

// Function pointers rather than values: nvcc's front end cannot evaluate
// type_name<T>() in a constant initializer, and CUDA sources include this header.
struct entry_ops {
  std::uint64_t (*type)() noexcept;
  std::string_view (*name)() noexcept;
  // Sorts [first, last); `scratch` holds as many entries again.
  void (*sort)(walk_entry* first, walk_entry* last, walk_entry* scratch) noexcept;
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

/// Where a module stands; module_node (one per module, its layout the
/// format's) holds it in `state`. Only the hub writes it, under its mutex.
struct module_state {
  enum : std::uint32_t { unseen = 0, live = 1, detached = 2, gone = 3 };
};

struct module_node;

/// What a module's hook reports.
enum class module_change : int { loaded, unloading };

ROSTER_API ROSTER_INLINE const snapshot* collect(inventory_slot& slot) noexcept;
/// Sorts entries by key_bits (a stable radix sort through scratch, which holds
/// as many entries again), then each run of one key by module rank and site.
ROSTER_API ROSTER_INLINE void sort_by_key_bits(walk_entry* first, walk_entry* last, walk_entry* scratch) noexcept;
/// Orders entries of one key: module rank, then site, then address.
ROSTER_API ROSTER_INLINE bool tie_less(const walk_entry& a, const walk_entry& b) noexcept;
/// Sorts entries by `less` (std::sort, out of line: the inventories sorted by
/// comparison hold tens of entries, and the public headers then need no
/// <algorithm>; an integral key takes sort_by_key_bits).
ROSTER_API ROSTER_INLINE void sort_by(walk_entry* first, walk_entry* last,
                                      bool (*less)(const walk_entry&, const walk_entry&)) noexcept;
/// Called by each module's hook (and by a module's first lookup).
ROSTER_API ROSTER_INLINE void module_event(module_node& node, module_change what) noexcept;
/// Makes a detached module visible again (unload_plugin, when dlclose kept it).
ROSTER_API ROSTER_INLINE void attach_module(module_node& node) noexcept;
/// Hides a module from later collections.
ROSTER_API ROSTER_INLINE void detach_module(module_node& node) noexcept;
/// Detaches the module of a dlopen handle (an HMODULE on Windows) before it
/// is closed (unload_plugin); returns its node (null when it carries no
/// inventory), for attach_module.
ROSTER_API ROSTER_INLINE module_node* detach_module_of(void* handle) noexcept;
ROSTER_API ROSTER_INLINE std::uint64_t hub_collections() noexcept;
ROSTER_API ROSTER_INLINE inventory_stats stats_of(const inventory_slot& slot) noexcept;
/// Drops and frees every snapshot so the next call collects again; for
/// benchmarks only: no span handed out before may be used afterwards.
ROSTER_API ROSTER_INLINE void invalidate_for_testing() noexcept;

}  // namespace roster::detail
