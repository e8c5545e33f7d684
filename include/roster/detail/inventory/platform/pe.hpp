#pragma once
// Private: the inventory's section, markers and per-module hook on PE/COFF
// (Windows: MinGW-w64 GCC with GNU ld, Clang with lld); the module walk is
// in pe_modules.hpp.
//
// How the linker orders and keeps the section: the records are in
// .roster$m, the module's start marker in .roster$a and its end marker in
// .roster$z. Every linker puts input sections that differ only after the `$`
// into one output section, .roster, sorted by that suffix (link.exe and
// lld-link always, GNU ld for a section its script does not name: the rule
// MSVC's C runtime uses for .CRT$XCA..XCZ), so in each image the start marker
// comes first and the end marker last. link.exe and lld-link's /OPT:REF
// (MinGW's --gc-sections) drop only COMDAT sections, which .roster$m is not;
// GNU ld's --gc-sections drops any section that no kept section refers to,
// but keeps every .xdata* input section (its default script says KEEP) and
// follows its relocations, so each record is named there by a 4-byte
// image-relative reference (.rva: no relocation at load time). The collection
// sorts, so the order of records never matters.
//
// How a collection finds each module: the markers, the node and the hook are
// COMDAT, one per image. The hook is a pointer in .CRT$XCU, which the C
// runtime calls before the image's C++ constructors (an EXE's before main, a
// DLL's from its DllMainCRTStartup, when LoadLibrary maps it): it registers
// the node, which holds the markers and the image base, with the hub, and
// asks atexit (a DLL's own list) for the fini, which the runtime calls when
// FreeLibrary unloads the DLL or the program exits. No DllMain of the user's,
// no EnumProcessModules; one call per image, none per entry. GNU ld's script
// keeps .CRT$XC*; lld drops an unreferenced COMDAT, so every unit names the
// hook from .xdata as well.

#include <roster/detail/inventory/inventory_hub.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>

// A C symbol's name in assembly (a leading underscore on 32-bit x86).
#define ROSTER_IMPL_ASM_NAME(name) ROSTER_IMPL_STR(__USER_LABEL_PREFIX__) #name

namespace roster::detail {

/// One module's state, in the image's own memory (a DLL loaded again starts
/// fresh): its records between the markers, its image base (the HMODULE),
/// and its link in the hub's registration list. Only the hub writes it,
/// under its mutex.
struct module_node : module_state {
  std::atomic<std::uint32_t> state;
  const record* begin;
  const record* end;
  const void* image;
  module_node* next;
};

/// The hub's lock. Not std::mutex: winpthreads' has no constant initializer,
/// and the hub must be constinit (a DLL's hook may reach it before any
/// constructor ran). Waiters sleep in std::atomic::wait.
class hub_mutex {
 public:
  void lock() noexcept {
    while (locked_.exchange(1, std::memory_order_acquire) != 0) locked_.wait(1, std::memory_order_relaxed);
  }
  void unlock() noexcept {
    locked_.store(0, std::memory_order_release);
    locked_.notify_one();
  }

 private:
  std::atomic<std::uint32_t> locked_{0};
};

/// The registered modules, in registration order (a DLL before the DLLs and
/// the EXE that import it, LoadLibrary's in load order).
struct module_registry {
  module_node* first = nullptr;
};

}  // namespace roster::detail

// The getter lives in a section of known name: the record's asm leaves it for
// .roster$m and must come back to it, and COFF assemblers have no
// .pushsection. Grouped sections: .text$roster goes into .text.
#define ROSTER_IMPL_GETTER_ATTRIBUTES gnu::used, gnu::noinline, gnu::section(".text$roster")

// The record, written by the assembler from inside the getter (see
// inventory.hpp), and its keeping reference in .xdata (a label, not `1b`:
// Clang's assembler takes a symbol after .rva).
#define ROSTER_IMPL_RECORD_ASM(T, getter, site)                                                  \
  __asm__ __volatile__(                                                                          \
      ".section .roster$m,\"dr\"\n.balign 16\n.Lroster_record%=:\n"                             \
      ".long %c0\n.long %c1\n.long %c2 - .\n.long %c3 - .\n"                                     \
      ".section .xdata$roster_keep,\"dr\"\n.rva .Lroster_record%=\n"                            \
      ".section .text$roster,\"xr\""                                                             \
      : /* no outputs */                                                                         \
      : "i"(::roster::detail::type_key_half<T, 0>::value),                                      \
        "i"(::roster::detail::type_key_half<T, 1>::value), "i"(&getter), "i"(site))

// Per image: PE has no symbol interposition (a symbol is the image's own
// unless imported by name), so these need no visibility attribute.
extern "C" {
// The image's base, which the linker defines in every EXE and DLL.
extern const char roster_impl_image_base[] __asm__(ROSTER_IMPL_ASM_NAME(__ImageBase));

// Zero records: the walk skips them.
[[gnu::used, gnu::section(".roster$a")]] inline constinit const roster::detail::record
    roster_impl_section_start alignas(16){};
[[gnu::used, gnu::section(".roster$z")]] inline constinit const roster::detail::record
    roster_impl_section_end alignas(16){};

[[gnu::used]] inline constinit roster::detail::module_node roster_impl_module_node{
    {}, {}, &roster_impl_section_start, &roster_impl_section_end, roster_impl_image_base, nullptr};

[[gnu::used]] inline void roster_impl_module_fini() noexcept {
  roster::detail::module_event(roster_impl_module_node, roster::detail::module_change::unloading);
}
[[gnu::used]] inline void roster_impl_module_init() noexcept {
  roster::detail::module_event(roster_impl_module_node, roster::detail::module_change::loaded);
  std::atexit(&roster_impl_module_fini);
}

using roster_impl_module_hook_type = void (*)();
[[gnu::used, gnu::section(".CRT$XCU")]] inline constinit const roster_impl_module_hook_type roster_impl_module_hook =
    &roster_impl_module_init;
}

// Every unit names the hook from a kept section (see the top of this file).
__asm__(".section .xdata$roster_keep,\"dr\"\n.rva " ROSTER_IMPL_ASM_NAME(roster_impl_module_hook) "\n.text");

namespace roster::detail {

// A module whose own code asks for an inventory is live even before its hook
// ran.
inline void register_this_module() noexcept {
  if (roster_impl_module_node.state.load(std::memory_order_relaxed) == module_node::unseen)
    module_event(roster_impl_module_node, module_change::loaded);
}

}  // namespace roster::detail
