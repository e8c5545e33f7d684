#pragma once
// Private: the ELF module walk (the section and the hook are in elf.hpp).
// Included by the inventory's out-of-line code only.
//
// The first collection walks dl_iterate_phdr, finds each module's note
// (elf.hpp) and caches the modules in the hub; dlpi_adds/dlpi_subs tell a
// later collection whether a module came or went since. The rank of a module
// is its place in the dynamic linker's list: the executable, then libraries
// in load order. The hook holds a dlclose back (under the hub's mutex) until
// no collection reads the module; glibc runs it under dl_load_lock, which
// dl_iterate_phdr does not take, so the two never wait on each other.

#include <roster/detail/inventory/inventory_hub_state.hpp>
#include <roster/detail/inventory/platform/elf.hpp>
#include <roster/detail/inventory/platform/posix_modules.hpp>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

namespace roster::detail {

struct elf_counters {
  unsigned long long adds = 0, subs = 0;
  bool ok = false;
};

inline int elf_read_counters(dl_phdr_info* info, std::size_t size, void* data) noexcept {
  auto* c = static_cast<elf_counters*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
    c->ok = true;
  }
  return 1;  // the first module carries the counters: stop
}

struct elf_scan {
  module_entry* out;
  std::size_t capacity;
  std::size_t count;
};

// Finds the module's roster notes (several when LTO joined the top-level
// assembly of many units into one object: the same bounds, kept once).
// Runs under the loader's lock, so a module that is mapped but not yet
// initialised (its hook has not run, its GOT may not be relocated) is seen
// with state unseen and left out; its hook rescans when it runs.
inline int elf_scan_module(dl_phdr_info* info, std::size_t, void* data) noexcept {
  auto* scan = static_cast<elf_scan*>(data);
  for (int p = 0; p < info->dlpi_phnum; ++p) {
    const auto& ph = info->dlpi_phdr[p];
    if (ph.p_type != PT_NOTE) continue;
    // The padding follows p_align in principle, but mold merges 4- and
    // 8-aligned notes into one segment aligned 8: read it both ways (a note
    // found twice is kept once).
    for (const std::size_t align : {std::size_t{4}, std::size_t{8}}) {
      auto at = static_cast<std::uintptr_t>(info->dlpi_addr + ph.p_vaddr);
      const std::uintptr_t end = at + ph.p_memsz;
      while (at + sizeof(ElfW(Nhdr)) <= end) {
        ElfW(Nhdr) nh;
        std::memcpy(&nh, reinterpret_cast<const void*>(at), sizeof nh);
        const std::uintptr_t name = at + sizeof nh;
        const std::uintptr_t desc = name + ((nh.n_namesz + align - 1) & ~(align - 1));
        const std::uintptr_t next = desc + ((nh.n_descsz + align - 1) & ~(align - 1));
        if (next > end) break;
        if (nh.n_type == ROSTER_IMPL_NOTE_TYPE && nh.n_namesz == sizeof ROSTER_IMPL_NOTE_NAME &&
            std::memcmp(reinterpret_cast<const void*>(name), ROSTER_IMPL_NOTE_NAME, nh.n_namesz) == 0 &&
            nh.n_descsz >= 16) {
          const auto* fields = reinterpret_cast<const char*>(desc);
          module_entry e{at_offset<const record>(fields + 4), at_offset<const record>(fields + 8),
                         at_offset<module_node>(fields + 12), static_cast<std::uintptr_t>(info->dlpi_addr),
                         info->dlpi_name};
          bool seen = false;
          for (std::size_t i = std::min(scan->count, scan->capacity); i-- > 0 && !seen;) seen = scan->out[i].node == e.node;
          // Left out as well: a module whose unload hook has run (gone). The
          // loader unmaps it after the hook, without the hub's mutex, so a
          // collection that walks the modules between the two must not keep
          // it: it reads each kept module's node again, and the module may
          // be unmapped by then (SIGSEGV in the stress test, 1 run in about 20 under load).
          const auto state = e.node->state.load(std::memory_order_acquire);
          if (!seen && state != module_node::unseen && state != module_node::gone) {
            if (scan->count < scan->capacity) scan->out[scan->count] = e;
            ++scan->count;
          }
        }
        at = next;
      }
    }
  }
  return 0;
}

/// Brings the hub's module list up to date; called with the hub locked.
/// Returns false when memory for a list beyond hub::inline_modules ran out.
inline bool refresh_modules(hub& h) noexcept {
  elf_counters c;
  dl_iterate_phdr(&elf_read_counters, &c);
  if (h.known && c.ok && c.adds == h.registry.adds && c.subs == h.registry.subs) return true;
  if (h.list == nullptr) {
    h.list = h.inline_list;
    h.capacity = hub::inline_modules;
  }
  for (;;) {
    elf_scan scan{h.list, h.capacity, 0};
    dl_iterate_phdr(&elf_scan_module, &scan);
    if (scan.count <= h.capacity) {
      h.count = scan.count;
      break;
    }
    auto* bigger = static_cast<module_entry*>(::operator new(scan.count * 2 * sizeof(module_entry), std::nothrow));
    if (bigger == nullptr) return false;
    if (h.list != h.inline_list) ::operator delete(h.list);
    h.list = bigger;
    h.capacity = scan.count * 2;
  }
  h.known = c.ok;
  h.registry.adds = c.adds;
  h.registry.subs = c.subs;
  return true;
}

/// Notes a module's hook; called with the hub locked. The walk finds ELF
/// modules through their notes: nothing to record.
inline void module_loaded(hub&, module_node&) noexcept {}
inline void module_unloading(hub&, module_node&) noexcept {}

/// Returns the node of the module behind a dlopen handle, or null.
inline module_node* module_of_handle(hub& h, void* handle) noexcept {
  link_map* target = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &target) != 0 || target == nullptr) return nullptr;
  std::lock_guard lock(h.mutex);
  if (!refresh_modules(h)) return nullptr;
  // glibc's dlpi_name is the link_map's l_name: no dladdr (and no loader
  // lock) needed under the hub's mutex.
  for (std::size_t i = 0; i < h.count; ++i)
    if (h.list[i].base == target->l_addr && h.list[i].tag == target->l_name) return h.list[i].node;
  return nullptr;
}

/// Readies the walk before a collection takes the hub's lock: nothing on ELF.
inline void prepare_module_walk(hub&) noexcept {}

}  // namespace roster::detail
