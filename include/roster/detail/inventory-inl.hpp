#pragma once
// Private: the hub's out-of-line code; inline in header-only mode, compiled
// once into the library otherwise.

#include <roster/inventory.hpp>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>

namespace roster::detail {

struct hub {
  std::mutex mutex;            // serialises collection, attach and detach
  module_node* modules = nullptr;
  inventory_slot* slots = nullptr;
  const snapshot* retired = nullptr;
  std::uint64_t generation = 0;
  std::atomic<std::uint64_t> collections{0};
};

// Process-wide: default visibility, so every module shares this one hub.
ROSTER_API ROSTER_INLINE hub& the_hub() noexcept {
  static constinit hub h;  // load_plugin looks this name up (detail/plugin_hub.hpp)
  return h;
}

namespace {
// Invalidates every published snapshot; called with the hub locked.
inline void invalidate_all(hub& h) noexcept {
  ++h.generation;
  for (auto* s = h.slots; s != nullptr; s = s->next) s->current.store(nullptr, std::memory_order_release);
}

struct module_order_search {
  const module_node* const* nodes;
  std::size_t count;
  std::size_t* order;
  std::size_t next_index;
};

// Orders modules as the dynamic linker lists them: the executable first, then
// libraries in load order. The earliest module wins a duplicate.
inline int order_modules_cb(dl_phdr_info* info, std::size_t, void* data) noexcept {
  auto* search = static_cast<module_order_search*>(data);
  std::size_t index = search->next_index++;
  for (std::size_t m = 0; m < search->count; ++m) {
    auto addr = reinterpret_cast<ElfW(Addr)>(search->nodes[m]->begin);
    for (int p = 0; p < info->dlpi_phnum; ++p) {
      const auto& ph = info->dlpi_phdr[p];
      if (ph.p_type != PT_LOAD) continue;
      ElfW(Addr) lo = info->dlpi_addr + ph.p_vaddr;
      if (addr >= lo && addr < lo + ph.p_memsz) search->order[m] = index;
    }
  }
  return 0;
}

}  // namespace

ROSTER_API ROSTER_INLINE void attach_module(module_node& node) noexcept {
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  if (node.attached) return;
  node.next = h.modules;
  h.modules = &node;
  node.attached = true;
  invalidate_all(h);
}

ROSTER_API ROSTER_INLINE void detach_module(module_node& node) noexcept {
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  if (!node.attached) return;
  for (module_node** p = &h.modules; *p != nullptr; p = &(*p)->next) {
    if (*p == &node) {
      *p = node.next;
      break;
    }
  }
  node.attached = false;
  invalidate_all(h);
  // A slot that lives in the module being unloaded (a type only that plugin
  // asked for, where the dynamic linker did not unify the slot with another
  // module's) must leave the list, or the next invalidation writes into
  // unmapped memory. It is re-linked if it is ever collected again.
  Dl_info self{};
  if (dladdr(&node, &self) == 0 || self.dli_fbase == nullptr) return;
  for (inventory_slot** p = &h.slots; *p != nullptr;) {
    Dl_info where{};
    if (dladdr(*p, &where) != 0 && where.dli_fbase == self.dli_fbase) {
      (*p)->linked = false;
      *p = (*p)->next;
    } else {
      p = &(*p)->next;
    }
  }
}

ROSTER_API ROSTER_INLINE module_node* detach_module_of(void* handle) noexcept {
  link_map* target = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &target) != 0 || target == nullptr) return nullptr;
  module_node* found = nullptr;
  {
    std::lock_guard lock(the_hub().mutex);
    for (auto* m = the_hub().modules; m != nullptr; m = m->next) {
      Dl_info info{};
      link_map* owner = nullptr;
      if (dladdr1(m, &info, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) != 0 && owner == target) {
        found = m;
        break;
      }
    }
  }
  if (found != nullptr) detach_module(*found);
  return found;
}

ROSTER_API ROSTER_INLINE void invalidate_for_testing() noexcept {
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  invalidate_all(h);
  // Nothing is published now; free the old snapshots so that a benchmark
  // collecting in a loop does not grow without bound.
  while (const snapshot* s = h.retired) {
    h.retired = s->retired_next;
    ::operator delete(const_cast<snapshot*>(s));
  }
}

ROSTER_API ROSTER_INLINE std::uint64_t hub_collections() noexcept {
  return the_hub().collections.load(std::memory_order_relaxed);
}

ROSTER_API ROSTER_INLINE const snapshot* collect(inventory_slot& slot) noexcept {
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  if (const snapshot* s = slot.current.load(std::memory_order_acquire)) return s;  // lost the race
  auto start = std::chrono::steady_clock::now();
  if (!slot.linked) {
    slot.next = h.slots;
    h.slots = &slot;
    slot.linked = true;
  }
  const entry_ops& ops = slot.ops;
  const std::uint64_t type = ops.type();

  // Count the modules, then rank them by load order (no allocation: the
  // ranks live on the stack for up to 256 modules, beyond that they tie).
  constexpr std::size_t max_ranked = 256;
  const module_node* nodes[max_ranked];
  std::size_t ranks[max_ranked];
  std::size_t n_modules = 0;
  for (auto* m = h.modules; m != nullptr; m = m->next) {
    if (n_modules < max_ranked) {
      nodes[n_modules] = m;
      ranks[n_modules] = max_ranked;
    }
    ++n_modules;
  }
  std::size_t ranked = std::min(n_modules, max_ranked);
  module_order_search search{nodes, ranked, ranks, 0};
  dl_iterate_phdr(&order_modules_cb, &search);
  auto rank_of = [&](const module_node* m) {
    for (std::size_t i = 0; i < ranked; ++i)
      if (nodes[i] == m) return ranks[i];
    return max_ranked;
  };

  // Pass 1: count this type's entries in every module.
  auto matches = [&](const submission* sub) {
    return sub != nullptr && sub->type == type;
  };
  std::size_t total = 0;
  for (auto* m = h.modules; m != nullptr; m = m->next)
    for (auto* p = m->begin; p != m->end; ++p) total += matches(*p) ? 1 : 0;

  // One allocation: header, then entry objects, then scratch for sorting.
  std::size_t bytes = sizeof(snapshot) + total * sizeof(void*) + total * sizeof(walk_entry);
  void* raw = ::operator new(bytes, std::nothrow);
  if (raw == nullptr) {
    // Out of memory: publish nothing, answer with an empty view.
    static constinit snapshot empty{};
    return &empty;
  }
  auto* s = new (raw) snapshot{};
  auto** out = reinterpret_cast<const void**>(s + 1);
  auto* work = reinterpret_cast<walk_entry*>(out + total);

  // Pass 2: gather.
  std::size_t n = 0;
  for (auto* m = h.modules; m != nullptr; m = m->next) {
    std::size_t r = rank_of(m);
    for (auto* p = m->begin; p != m->end; ++p)
      if (matches(*p)) work[n++] = walk_entry{(*p)->object, *p, r};
  }

  // Sort by key, then module rank, then site: never by section order.
  ops.sort(work, work + n);

  // Duplicate policy: the same object submitted from many translation units
  // is one entry; the same submission site in several modules (one static
  // library linked twice) keeps the earliest module's; two different sites
  // with one key are a conflict: the earliest is kept and the conflict is
  // reported by inventory_info() and, for backends, by roster::check_backends().
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (kept > 0) {
      const walk_entry& prev = work[kept - 1];
      const walk_entry& cur = work[i];
      if (prev.object == cur.object) continue;
      bool same_key = ops.keyed ? ops.same_key(prev.object, cur.object)
                                : std::strcmp(prev.sub->site, cur.sub->site) == 0;
      if (same_key) {
        if (std::strcmp(prev.sub->site, cur.sub->site) == 0) {
          ++s->duplicates;
        } else {
          if (s->conflicts++ == 0) {
            s->kept_site = prev.sub->site;
            s->dropped_site = cur.sub->site;
          }
        }
        continue;
      }
    }
    work[kept++] = work[i];
  }
  for (std::size_t i = 0; i < kept; ++i) out[i] = work[i].object;
  s->count = kept;
  s->modules = n_modules;
  s->generation = h.generation;
  s->collect_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  s->retired_next = h.retired;
  h.retired = s;
  h.collections.fetch_add(1, std::memory_order_relaxed);
  slot.current.store(s, std::memory_order_release);
  return s;
}

ROSTER_API ROSTER_INLINE inventory_stats stats_of(const inventory_slot& slot) noexcept {
  inventory_stats st;
  const snapshot* s = slot.current.load(std::memory_order_acquire);
  if (s == nullptr) return st;
  st.entries = s->count;
  st.duplicates = s->duplicates;
  st.conflicts = s->conflicts;
  st.modules = s->modules;
  st.collect_ns = s->collect_ns;
  st.generation = s->generation;
  st.kept_site = s->kept_site;
  st.dropped_site = s->dropped_site;
  return st;
}

}  // namespace roster::detail
