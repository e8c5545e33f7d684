#pragma once
// Private: the inventory's section and markers on Mach-O (macOS); the module
// walk is in macho_modules.hpp. Compiled for arm64 and x86_64 and linked with
// ld64.lld in roster's tests, whose result is inspected; never run.
//
// How the linker orders and keeps the section: every input section
// __DATA,__roster goes into one output section of that name (ld64 and
// ld64.lld alike), in link order; the linker defines
// section$start$__DATA$__roster and section$end$__DATA$__roster around it in
// each image (executable, dylib, bundle). -dead_strip drops any atom nothing
// references, which a record is: the section's no_dead_strip attribute keeps
// every record. The collection sorts, so the order never matters. Section
// names have 16 characters at most.
//
// How a collection finds each module: one descriptor per image, in
// __DATA,__roster_mod, holding the markers and the image's module_node (both
// weak and hidden, so the static linker keeps one per image and the dynamic
// linker never joins two images'). The hub asks dyld, once, to report every
// image added and removed (_dyld_register_func_for_add_image, _remove_image)
// and reads the descriptor of each: no per-image hook, nothing run per entry.

#include <roster/detail/inventory/inventory_hub.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>

// Per image, hidden: with default visibility the dynamic linker would unify
// them across images.
#define ROSTER_IMPL_MODULE_LOCAL __attribute__((visibility("hidden")))

namespace roster::detail {

/// One image's state, in the image's own zeroed memory (an image loaded
/// again starts fresh). Only the hub writes it, under its mutex.
struct module_node : module_state {
  std::atomic<std::uint32_t> state;
};

/// What dyld's callback reads in each image (macho_modules.hpp).
struct module_descriptor {
  std::uint32_t magic;    // module_descriptor::expected
  std::uint32_t version;  // 1
  const record* begin;
  const record* end;
  module_node* node;
  static constexpr std::uint32_t expected = 0x52535452;  // "RTSR"
};

/// The hub's lock.
using hub_mutex = std::mutex;

/// The hub asks dyld for its callbacks once; a collection waits on
/// `watch` until they reported the images already loaded.
struct module_registry {
  std::mutex watch;
  bool watching = false;
};

}  // namespace roster::detail

// The getter needs nothing beyond being kept: `used` keeps it at -O0 and
// under LTO, noinline keeps its address the one the record holds.
#define ROSTER_IMPL_GETTER_ATTRIBUTES gnu::used, gnu::noinline

// The record, written by the assembler from inside the getter (see
// inventory.hpp). Its offsets are taken from a label at the record's start:
// ld64.lld needs the subtracted symbol of a SUBTRACTOR relocation to be a
// symbol ("l" makes it linker-private), and x86_64's assembler writes `- .`
// against the section instead.
#define ROSTER_IMPL_RECORD_ASM(T, getter, site)                                                   \
  __asm__ __volatile__(                                                                           \
      ".pushsection __DATA,__roster,regular,no_dead_strip\n.p2align 4\nl_roster_record%=:\n"     \
      ".long %c0\n.long %c1\n"                                                                    \
      ".long %c2 - l_roster_record%= - 8\n.long %c3 - l_roster_record%= - 12\n.popsection"       \
      : /* no outputs */                                                                          \
      : "i"(::roster::detail::type_key_half<T, 0>::value),                                       \
        "i"(::roster::detail::type_key_half<T, 1>::value), "i"(&getter), "i"(site))

extern "C" {
// The image's markers, which the linker defines (no leading underscore).
extern const roster::detail::record roster_impl_section_start __asm__("section$start$__DATA$__roster")
    ROSTER_IMPL_MODULE_LOCAL;
extern const roster::detail::record roster_impl_section_end __asm__("section$end$__DATA$__roster")
    ROSTER_IMPL_MODULE_LOCAL;

[[gnu::used]] ROSTER_IMPL_MODULE_LOCAL inline constinit roster::detail::module_node roster_impl_module_node{};
[[gnu::used, gnu::section("__DATA,__roster_mod")]] ROSTER_IMPL_MODULE_LOCAL inline constinit const
    roster::detail::module_descriptor roster_impl_module_descriptor{
        roster::detail::module_descriptor::expected, 1, &roster_impl_section_start, &roster_impl_section_end,
        &roster_impl_module_node};
}

namespace roster::detail {

// dyld reports every image, before or after the first lookup: nothing to do.
inline void register_this_module() noexcept {}

}  // namespace roster::detail
