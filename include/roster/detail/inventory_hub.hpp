#pragma once
// Private: the process-wide hub that merges the per-module inventory sections.
//
// How it works, and why it costs nothing at start-up:
//
// - Each ROSTER_SUBMIT adds one 16-byte record to the section
//   "roster_inventory": the type's key, then two 32-bit PC-relative offsets
//   (`.long target - .`, as the Linux kernel's relative exception tables):
//   one to a two-instruction getter that returns the object's address, one
//   to the "file:line" string. The linker resolves every offset, so the
//   section is read-only data with no dynamic relocation and no code run per
//   entry; its pages stay clean until the first collection reads them.
// - Why a getter and not an offset to the object itself: a default-visibility
//   object in a shared library (an inline variable, registration_of<B>) may
//   be interposed, so neither the compiler ("i" constraint) nor the linker
//   (R_X86_64_PC32 in a shared object) accepts a link-time offset to it. The
//   getter's `return &object` lets the compiler pick `lea` when the object
//   binds locally (no relocation) and a GOT load when it may be interposed
//   (that relocation is the user's, and it yields the address every module
//   agrees on).
// - Each module (executable or shared object) carries one ELF note "roster"
//   (SHT_NOTE, so the linker puts it in a PT_NOTE segment that
//   dl_iterate_phdr shows) in a COMDAT group, holding PC-relative offsets to
//   its own __start_/__stop_roster_inventory and to its module_node. The
//   first collection walks dl_iterate_phdr, finds the notes and caches the
//   modules; dlpi_adds/dlpi_subs tell a later collection whether a module
//   came or went since.
// - One hook per module, in the same COMDAT group: an .init_array and a
//   .fini_array entry. They cannot be avoided: after the freeze a lookup is
//   one acquire load, which cannot see a dlopen or a dlclose; the hook drops
//   the published snapshots so the next lookup collects again, and on
//   dlclose it holds the unmapping back until no collection is reading the
//   module. It is one call per module, never per entry.

#include <roster/config.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#define ROSTER_IMPL_SECTION_NAME "roster_inventory"
#define ROSTER_IMPL_NOTE_NAME "roster"
#define ROSTER_IMPL_NOTE_TYPE 0x52535452  // "RTSR"

namespace roster { struct inventory_stats; }

namespace roster::detail {

/// One submission as the section holds it: 16 bytes, no pointer.
struct record {
  std::uint32_t type_lo;  // type_key<T>(), low half
  std::uint32_t type_hi;  // high half
  std::int32_t getter;    // getter - &getter: returns the object
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

/// One entry while a collection gathers and sorts them.
struct walk_entry {
  const void* object;
  const char* site;
  std::size_t module_rank;  // the module's place in the dynamic linker's list
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

/// One module's state, in the module's own zeroed memory (so a module loaded
/// again starts fresh). Only the hub writes it, under its mutex.
struct module_node {
  enum : std::uint32_t { unseen = 0, live = 1, detached = 2, gone = 3 };
  std::atomic<std::uint32_t> state;
};

/// What a module's hook reports.
enum class module_change : int { loaded, unloading };

ROSTER_API ROSTER_INLINE const snapshot* collect(inventory_slot& slot) noexcept;
/// Sorts entries by key_bits (a stable radix sort through scratch, which holds
/// as many entries again), then each run of one key by module rank and site.
ROSTER_API ROSTER_INLINE void sort_by_key_bits(walk_entry* first, walk_entry* last, walk_entry* scratch) noexcept;
/// Orders entries of one key: module rank, then site, then address.
ROSTER_API ROSTER_INLINE bool tie_less(const walk_entry& a, const walk_entry& b) noexcept;
/// Called by each module's hook (and by a module's first lookup).
ROSTER_API ROSTER_INLINE void module_event(module_node& node, module_change what) noexcept;
/// Makes a detached module visible again (unload_plugin, when dlclose kept it).
ROSTER_API ROSTER_INLINE void attach_module(module_node& node) noexcept;
/// Hides a module from later collections.
ROSTER_API ROSTER_INLINE void detach_module(module_node& node) noexcept;
/// Detaches the module of a dlopen handle before dlclose (unload_plugin);
/// returns its node (null when it carries no inventory), for attach_module.
ROSTER_API ROSTER_INLINE module_node* detach_module_of(void* handle) noexcept;
ROSTER_API ROSTER_INLINE std::uint64_t hub_collections() noexcept;
ROSTER_API ROSTER_INLINE inventory_stats stats_of(const inventory_slot& slot) noexcept;
/// Drops and frees every snapshot so the next call collects again; for
/// benchmarks only: no span handed out before may be used afterwards.
ROSTER_API ROSTER_INLINE void invalidate_for_testing() noexcept;

}  // namespace roster::detail

// Per module, hidden: with default visibility the dynamic linker would unify
// them across modules and only the first module would be seen. extern "C"
// so that the note and the hook (assembly below) can name them; used, so an
// inline definition is emitted in every unit that includes this header (the
// linker keeps one per module).
extern "C" {
[[gnu::used]] ROSTER_IMPL_HIDDEN inline constinit roster::detail::module_node roster_impl_module_node{};
[[gnu::used]] ROSTER_IMPL_HIDDEN inline void roster_impl_module_init() noexcept {
  roster::detail::module_event(roster_impl_module_node, roster::detail::module_change::loaded);
}
[[gnu::used]] ROSTER_IMPL_HIDDEN inline void roster_impl_module_fini() noexcept {
  roster::detail::module_event(roster_impl_module_node, roster::detail::module_change::unloading);
}
}

#if defined(__x86_64__) || defined(__i386__)
#  define ROSTER_IMPL_ASM_TYPE(t) "@" #t
#else
#  define ROSTER_IMPL_ASM_TYPE(t) "%" #t
#endif
#if defined(__LP64__)
#  define ROSTER_IMPL_ASM_PTR ".quad"
#else
#  define ROSTER_IMPL_ASM_PTR ".long"
#endif

// The module's note and hook, once per module: every section below is in one
// COMDAT group, which the linker keeps once per link unit. "R" (retain)
// keeps them under --gc-sections and lld's -z start-stop-gc. The group also
// holds one zero record, so __start_/__stop_ are defined in every module that
// has the note (a weak undefined one could not be reached PC-relatively); the
// walk skips zero records, and so also any zero padding a linker inserts.
// Not in CUDA device compilation, which has no ELF sections of its own.
#if !defined(__CUDA_ARCH__)
__asm__(
    ".pushsection .note.roster,\"aRG\"," ROSTER_IMPL_ASM_TYPE(note) ",roster_impl_module_group,comdat\n"
    ".balign 4\n"
    ".long 7\n"   // namesz: "roster" and its NUL
    ".long 16\n"  // descsz
    ".long " ROSTER_IMPL_STR(ROSTER_IMPL_NOTE_TYPE) "\n"
    ".asciz \"" ROSTER_IMPL_NOTE_NAME "\"\n"
    ".balign 4\n"
    ".long 1\n"  // version
    ".long __start_roster_inventory - .\n"
    ".long __stop_roster_inventory - .\n"
    ".long roster_impl_module_node - .\n"
    ".popsection\n"
    ".pushsection roster_inventory,\"aRG\"," ROSTER_IMPL_ASM_TYPE(progbits) ",roster_impl_module_group,comdat\n"
    ".balign 16\n"
    ".zero 16\n"
    ".popsection\n"
    ".pushsection .init_array,\"awG\"," ROSTER_IMPL_ASM_TYPE(init_array) ",roster_impl_module_group,comdat\n"
    ".balign 8\n" ROSTER_IMPL_ASM_PTR " roster_impl_module_init\n"
    ".popsection\n"
    ".pushsection .fini_array,\"awG\"," ROSTER_IMPL_ASM_TYPE(fini_array) ",roster_impl_module_group,comdat\n"
    ".balign 8\n" ROSTER_IMPL_ASM_PTR " roster_impl_module_fini\n"
    ".popsection\n");
#endif

namespace roster::detail {

// A module whose own code asks for an inventory is live even before its hook
// ran (a constructor of the module that runs before roster's).
ROSTER_IMPL_HIDDEN inline void register_this_module() noexcept {
  if (roster_impl_module_node.state.load(std::memory_order_relaxed) == module_node::unseen)
    module_event(roster_impl_module_node, module_change::loaded);
}

}  // namespace roster::detail
