#pragma once
// Private: the inventory's section, markers and per-module hook on ELF
// (Linux, the BSDs); the module walk is in elf_modules.hpp.
//
// How the linker orders and keeps the section: every input section named
// roster_inventory goes, in link order (never sorted), into one output
// section of that name, and because the name is a C identifier the linker
// defines __start_roster_inventory and __stop_roster_inventory around it, per
// link unit (bfd, gold, lld, mold alike). --gc-sections would drop it (nothing
// references a record), and lld's -z start-stop-gc would even when the
// markers are referenced: "R" (SHF_GNU_RETAIN) keeps every record. The
// collection sorts, so the order never matters.
//
// How a collection finds each module: one ELF note "roster" per module
// (SHT_NOTE, so the linker puts it in a PT_NOTE segment that dl_iterate_phdr
// shows), in a COMDAT group, holding PC-relative offsets to the module's own
// __start_/__stop_roster_inventory and to its module_node. The group also
// holds the module's hook: an .init_array and a .fini_array entry.

#include <roster/detail/inventory/inventory_hub.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>

#define ROSTER_IMPL_NOTE_NAME "roster"
#define ROSTER_IMPL_NOTE_TYPE 0x52535452  // "RTSR"

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

// Per module, hidden: with default visibility the dynamic linker would unify
// them across modules and only the first module would be seen.
#define ROSTER_IMPL_MODULE_LOCAL __attribute__((visibility("hidden")))

namespace roster::detail {

/// One module's state, in the module's own zeroed memory (so a module loaded
/// again starts fresh). Only the hub writes it, under its mutex.
struct module_node : module_state {
  std::atomic<std::uint32_t> state;
};

/// The hub's lock.
using hub_mutex = std::mutex;

/// What the hub keeps to tell whether a module came or went since its last
/// walk: the loader's dlpi_adds and dlpi_subs.
struct module_registry {
  unsigned long long adds = 0;
  unsigned long long subs = 0;
};

}  // namespace roster::detail

// The getter needs nothing beyond being kept: `used` keeps it at -O0 and
// under LTO, noinline keeps its address the one the record holds.
#define ROSTER_IMPL_GETTER_ATTRIBUTES gnu::used, gnu::noinline

// The record, written by the assembler from inside the getter (see
// inventory.hpp); "aR": allocated, retained. In CUDA device compilation the
// getter is host code and the record is left out.
#if defined(__CUDA_ARCH__)
#  define ROSTER_IMPL_RECORD_ASM(T, getter, site) (void)site
#else
#  define ROSTER_IMPL_RECORD_ASM(T, getter, site)                                             \
    __asm__ __volatile__(                                                                     \
        ".pushsection roster_inventory,\"aR\"," ROSTER_IMPL_ASM_TYPE(progbits) "\n"           \
        ".balign 16\n.long %c0\n.long %c1\n.long %c2 - .\n.long %c3 - .\n.popsection"        \
        : /* no outputs */                                                                    \
        : "i"(::roster::detail::type_key_half<T, 0>::value),                                 \
          "i"(::roster::detail::type_key_half<T, 1>::value), "i"(&getter), "i"(site))
#endif

// extern "C" so that the note and the hook (assembly below) can name them;
// used, so an inline definition is emitted in every unit that includes this
// header (the linker keeps one per module).
extern "C" {
[[gnu::used]] ROSTER_IMPL_MODULE_LOCAL inline constinit roster::detail::module_node roster_impl_module_node{};
[[gnu::used]] ROSTER_IMPL_MODULE_LOCAL inline void roster_impl_module_init() noexcept {
  roster::detail::module_event(roster_impl_module_node, roster::detail::module_change::loaded);
}
[[gnu::used]] ROSTER_IMPL_MODULE_LOCAL inline void roster_impl_module_fini() noexcept {
  roster::detail::module_event(roster_impl_module_node, roster::detail::module_change::unloading);
}
}

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
ROSTER_IMPL_MODULE_LOCAL inline void register_this_module() noexcept {
  if (roster_impl_module_node.state.load(std::memory_order_relaxed) == module_node::unseen)
    module_event(roster_impl_module_node, module_change::loaded);
}

}  // namespace roster::detail
