#pragma once
// Private: the device cache and run-time factories.

#include <roster/device.hpp>
#include <roster/detail/backend-inl.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>

namespace roster {
namespace detail {

enum : std::uint8_t { slot_empty = 0, slot_opened = 1, slot_failed = 2 };

// One spec's entry. Slots are never freed: a pointer read from any table
// stays valid, so the hit path needs no lock and no reference count.
struct cache_slot {
  std::string key;
  std::uint64_t hash = 0;
  std::mutex open_mutex;  // serialises the one open of this spec
  std::atomic<std::uint8_t> state{slot_empty};
  device* opened = nullptr;          // written before state turns slot_opened
  std::unique_ptr<device> owner;     // never released: the cache owns the device for the process
  std::optional<roster::error> failure;
};

struct cache_entry {
  std::uint64_t hash;
  cache_slot* slot;
};

// An immutable table sorted by hash, replaced whole (copy on insert).
struct cache_table {
  std::vector<cache_entry> entries;
  const cache_table* retired_next = nullptr;  // old tables stay readable
};

struct device_cache {
  std::mutex mutex;  // serialises inserts and rescans, never taken on a hit
  std::atomic<const cache_table*> current{nullptr};
};

ROSTER_API ROSTER_INLINE device_cache& the_device_cache() noexcept {
  static constinit device_cache c;
  return c;
}

// Bumped by rescan(); circuits() re-scans when its snapshot is older.
ROSTER_API ROSTER_INLINE std::atomic<std::uint64_t>& scan_generation() noexcept {
  static constinit std::atomic<std::uint64_t> g{0};
  return g;
}

inline cache_slot* find_slot(const cache_table* t, std::uint64_t hash, std::string_view key) noexcept {
  if (t == nullptr) return nullptr;
  const cache_entry* b = t->entries.data();
  const cache_entry* e = b + t->entries.size();
  const cache_entry* it =
      std::lower_bound(b, e, hash, [](const cache_entry& x, std::uint64_t h) { return x.hash < h; });
  for (; it != e && it->hash == hash; ++it)
    if (it->slot->key == key) return it->slot;
  return nullptr;
}

// Publishes a copy of the current table with `slot` added; cache mutex held.
inline void insert_slot(device_cache& c, cache_slot* slot) {
  const cache_table* old = c.current.load(std::memory_order_relaxed);
  auto* t = new cache_table;
  if (old != nullptr) t->entries = old->entries;
  cache_entry e{slot->hash, slot};
  t->entries.insert(std::upper_bound(t->entries.begin(), t->entries.end(), e,
                                     [](const cache_entry& a, const cache_entry& b) { return a.hash < b.hash; }),
                    e);
  t->retired_next = old;
  c.current.store(t, std::memory_order_release);
}

inline expected<device*> get_device_slow(std::string_view text) noexcept {
  try {
    auto spec = parse_spec(text);
    if (!spec) return std::move(spec).error();
    const std::string key = spec->str();
    const std::uint64_t hash = spec_hash(key);
    auto& c = the_device_cache();
    cache_slot* slot = nullptr;
    {
      std::lock_guard lock(c.mutex);
      slot = find_slot(c.current.load(std::memory_order_acquire), hash, key);
      if (slot == nullptr) {
        auto fresh = std::make_unique<cache_slot>();
        fresh->key = key;
        fresh->hash = hash;
        insert_slot(c, fresh.get());
        slot = fresh.release();
      }
    }
    std::lock_guard open_lock(slot->open_mutex);
    if (slot->state.load(std::memory_order_acquire) == slot_empty) {
      auto d = acquire(key);
      if (d) {
        slot->owner = std::move(*d);
        slot->opened = slot->owner.get();
        slot->state.store(slot_opened, std::memory_order_release);
      } else {
        slot->failure.emplace(std::move(d).error());
        slot->state.store(slot_failed, std::memory_order_release);
      }
    }
    if (slot->state.load(std::memory_order_acquire) == slot_opened) return slot->opened;
    return *slot->failure;
  } catch (const std::exception& e) {
    return make_error(errc::internal, "get_device('" + std::string(text) + "'): " + e.what(),
                      "check the memory available to the process, then retry");
  } catch (...) {
    return make_error(errc::internal, "get_device('" + std::string(text) + "'): an unknown exception",
                      "report this as a roster bug");
  }
}

// Replaces every failed slot with a fresh one, so the next request retries.
inline void forget_failures() noexcept {
  try {
    auto& c = the_device_cache();
    std::lock_guard lock(c.mutex);
    const cache_table* old = c.current.load(std::memory_order_relaxed);
    if (old == nullptr) return;
    auto* t = new cache_table;
    t->entries = old->entries;
    for (auto& e : t->entries) {
      if (e.slot->state.load(std::memory_order_acquire) != slot_failed) continue;
      auto* fresh = new cache_slot;
      fresh->key = e.slot->key;
      fresh->hash = e.slot->hash;
      e.slot = fresh;
    }
    t->retired_next = old;
    c.current.store(t, std::memory_order_release);
  } catch (...) {
    // Out of memory: the failures stay cached; a later rescan retries.
  }
}

}  // namespace detail

ROSTER_INLINE expected<device*> get_device(std::string_view spec) noexcept {
  char buffer[detail::spec_key_capacity];
  const std::size_t n = detail::normalize_spec_into(spec, buffer);
  if (n != 0) [[likely]] {
    const std::string_view key(buffer, n);
    auto* slot = detail::find_slot(detail::the_device_cache().current.load(std::memory_order_acquire),
                                   detail::spec_hash(key), key);
    if (slot != nullptr && slot->state.load(std::memory_order_acquire) == detail::slot_opened) [[likely]]
      return slot->opened;
  }
  return detail::get_device_slow(spec);
}

ROSTER_INLINE void rescan() noexcept {
  detail::forget_failures();
  detail::scan_generation().fetch_add(1, std::memory_order_acq_rel);
}

ROSTER_INLINE expected<std::string> normalize_spec(std::string_view spec) {
  auto parsed = parse_spec(spec);
  if (!parsed) return std::move(parsed).error();
  return parsed->str();
}

ROSTER_INLINE expected<void> register_factory(std::string_view type_name, factory_fn factory,
                                              enumerator_fn enumerator, int rank) noexcept {
  try {
    const std::string shown(type_name);
    auto parsed = parse_spec(type_name);
    if (!parsed || type_name.find(':') != std::string_view::npos)
      return make_error(errc::invalid_argument, "register_factory: '" + shown + "' is not a type name",
                        "name the type with letters, digits, '_' and '-' only, e.g. 'my_backend'");
    if (factory == nullptr)
      return make_error(errc::invalid_argument, "register_factory('" + shown + "'): the factory is null",
                        "pass a function that opens an adapter by ordinal");
    auto& r = detail::runtime_backends();
    {
      std::lock_guard lock(r.mutex);
      if (find_backend(parsed->backend) != nullptr)
        return make_error(errc::conflict,
                          "register_factory('" + shown + "'): the type '" + parsed->backend +
                              "' is already registered",
                          "pick another type name; registered types: " + known_backends());
      auto* entry = new detail::runtime_backend{parsed->backend, {}, rank};
      entry->registration = backend_registration{entry->id, factory, enumerator, op_set::all()};
      const auto* old = r.current.load(std::memory_order_relaxed);
      auto* list = new detail::runtime_backend_list;
      if (old != nullptr) list->entries = old->entries;
      list->entries.push_back(entry);
      list->retired_next = old;
      r.current.store(list, std::memory_order_release);
    }
    rescan();
    return {};
  } catch (...) {
    return make_error(errc::out_of_memory, "register_factory('" + std::string(type_name) + "'): out of memory",
                      "check the memory available to the process, then retry");
  }
}

}  // namespace roster
