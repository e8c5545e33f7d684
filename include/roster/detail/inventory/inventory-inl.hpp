#pragma once
// Private: the hub's out-of-line code, the same for every object format (the
// module walk is the format's, in detail/platform/); inline in header-only
// mode, compiled once into the library otherwise.

#include <roster/inventory.hpp>
#include <roster/detail/inventory/inventory_hub_state.hpp>
#include <roster/detail/inventory/platform/modules.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <new>

namespace roster::detail {

ROSTER_API ROSTER_INLINE hub& the_hub() noexcept {
  static constinit hub h;  // load_plugin looks this name up (detail/backend/plugin_hub.hpp)
  return h;
}

// Invalidates every published snapshot; called with the hub locked.
inline void invalidate_all(hub& h) noexcept {
  ++h.generation;
  for (auto* s = h.slots; s != nullptr; s = s->next) s->current.store(nullptr, std::memory_order_release);
}

inline bool same_type(const record& r, std::uint32_t lo, std::uint32_t hi) noexcept {
  return r.getter != 0 && r.type_lo == lo && r.type_hi == hi;
}

// Returns the object of a record: its getter's result (null for a
// conditional submission whose condition is false).
inline const void* object_of(const record& r) noexcept {
  return reinterpret_cast<object_getter>(const_cast<unsigned char*>(at_offset<const unsigned char>(&r.getter)))();
}

ROSTER_API ROSTER_INLINE void module_event(module_node& node, module_change what) noexcept {
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  const auto state = node.state.load(std::memory_order_relaxed);
  if (what == module_change::loaded) {
    if (state != module_node::unseen) return;
    node.state.store(module_node::live, std::memory_order_release);
    module_loaded(h, node);
    h.known = false;  // seen by the loader before its hook ran: walk again
    invalidate_all(h);
    return;
  }
  if (state == module_node::gone) return;
  node.state.store(module_node::gone, std::memory_order_release);
  module_unloading(h, node);
  h.known = false;
  invalidate_all(h);
  // A slot that lives in the module being unloaded (a type only that plugin
  // asked for, where the dynamic linker did not unify the slot with another
  // module's) must leave the list, or the next invalidation writes into
  // unmapped memory. It is re-linked if it is ever collected again.
  for (inventory_slot** p = &h.slots; *p != nullptr;) {
    if (in_module_of(*p, node)) {
      (*p)->linked = false;
      *p = (*p)->next;
    } else {
      p = &(*p)->next;
    }
  }
}

ROSTER_API ROSTER_INLINE void attach_module(module_node& node) noexcept {
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  if (node.state.load(std::memory_order_relaxed) != module_node::detached) return;
  node.state.store(module_node::live, std::memory_order_release);
  h.known = false;
  invalidate_all(h);
}

ROSTER_API ROSTER_INLINE void detach_module(module_node& node) noexcept {
  auto& h = the_hub();
  std::lock_guard lock(h.mutex);
  if (node.state.load(std::memory_order_relaxed) != module_node::live) return;
  node.state.store(module_node::detached, std::memory_order_release);
  h.known = false;
  invalidate_all(h);
}

ROSTER_API ROSTER_INLINE module_node* detach_module_of(void* handle) noexcept {
  module_node* found = module_of_handle(the_hub(), handle);
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

ROSTER_API ROSTER_INLINE bool tie_less(const walk_entry& a, const walk_entry& b) noexcept {
  if (a.module_rank != b.module_rank) return a.module_rank < b.module_rank;
  int c = std::strcmp(a.site, b.site);
  if (c != 0) return c < 0;
  return reinterpret_cast<std::uintptr_t>(a.object) < reinterpret_cast<std::uintptr_t>(b.object);
}

ROSTER_API ROSTER_INLINE void sort_by(walk_entry* first, walk_entry* last,
                                      bool (*less)(const walk_entry&, const walk_entry&)) noexcept {
  std::sort(first, last, less);
}

ROSTER_API ROSTER_INLINE void sort_by_key_bits(walk_entry* first, walk_entry* last, walk_entry* scratch) noexcept {
  const std::size_t n = static_cast<std::size_t>(last - first);
  if (n < 2) return;
  // Least significant digit first, 8 bits a pass; one read counts every
  // digit, and a digit the same in every key (the high bytes of small keys)
  // costs no pass. Each pass is stable, so the gather order (module rank)
  // survives among equal keys.
  std::size_t counts[8][256] = {};
  for (const walk_entry* e = first; e != last; ++e)
    for (unsigned d = 0; d < 8; ++d) ++counts[d][(e->key_bits >> (8 * d)) & 0xffu];
  walk_entry* from = first;
  walk_entry* to = scratch;
  for (unsigned d = 0; d < 8; ++d) {
    const std::size_t first_digit = (first->key_bits >> (8 * d)) & 0xffu;
    if (counts[d][first_digit] == n) continue;  // one bucket: nothing moves
    std::size_t offset[256];
    std::size_t sum = 0;
    for (unsigned b = 0; b < 256; ++b) {
      offset[b] = sum;
      sum += counts[d][b];
    }
    for (const walk_entry* e = from; e != from + n; ++e) to[offset[(e->key_bits >> (8 * d)) & 0xffu]++] = *e;
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
  // Runs of one key (duplicates and conflicts: rare) by module rank and site.
  for (walk_entry* run = first; run != last;) {
    walk_entry* end = run + 1;
    while (end != last && end->key_bits == run->key_bits) ++end;
    if (end - run > 1) std::sort(run, end, tie_less);
    run = end;
  }
}

ROSTER_API ROSTER_INLINE std::uint64_t hub_collections() noexcept {
  return the_hub().collections.load(std::memory_order_relaxed);
}

ROSTER_API ROSTER_INLINE const snapshot* collect(inventory_slot& slot) noexcept {
  auto& h = the_hub();
  prepare_module_walk(h);
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
  const auto lo = static_cast<std::uint32_t>(type), hi = static_cast<std::uint32_t>(type >> 32);

  if (!refresh_modules(h)) {
    static constinit snapshot empty{};
    return &empty;
  }
  auto live = [](const module_entry& m) {
    return m.node->state.load(std::memory_order_acquire) == module_node::live;
  };

  // Pass 1: count this type's records in every live module; no pointer is
  // followed, only the section's own read-only pages are read.
  std::size_t total = 0, n_modules = 0;
  for (std::size_t m = 0; m < h.count; ++m) {
    if (!live(h.list[m])) continue;
    ++n_modules;
    for (const record* r = h.list[m].begin; r != h.list[m].end; ++r) total += same_type(*r, lo, hi) ? 1 : 0;
  }

  // One allocation: header, then entry objects, then two arrays of entries
  // for sorting.
  std::size_t bytes = sizeof(snapshot) + total * sizeof(void*) + 2 * total * sizeof(walk_entry);
  void* raw = ::operator new(bytes, std::nothrow);
  if (raw == nullptr) {
    // Out of memory: publish nothing, answer with an empty view.
    static constinit snapshot empty{};
    return &empty;
  }
  auto* s = new (raw) snapshot{};
  auto** out = reinterpret_cast<const void**>(s + 1);
  auto* work = reinterpret_cast<walk_entry*>(out + total);

  // Pass 2: gather, ranking modules in the hub's order (the executable
  // first, then libraries as the format lists them: the earliest wins a
  // duplicate).
  std::size_t n = 0;
  for (std::size_t m = 0; m < h.count; ++m) {
    if (!live(h.list[m])) continue;
    for (const record* r = h.list[m].begin; r != h.list[m].end; ++r) {
      if (!same_type(*r, lo, hi)) continue;
      // A conditional submission whose condition is false (ROSTER_IMPL_SUBMIT_IF) has no object.
      if (const void* object = object_of(*r)) work[n++] = walk_entry{object, at_offset<const char>(&r->site), m, 0};
    }
  }

  // Sort by key, then module rank, then site: never by section order.
  ops.sort(work, work + n, work + total);

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
                                : std::strcmp(prev.site, cur.site) == 0;
      if (same_key) {
        if (std::strcmp(prev.site, cur.site) == 0) {
          ++s->duplicates;
        } else {
          if (s->conflicts++ == 0) {
            s->kept_site = prev.site;
            s->dropped_site = cur.site;
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
