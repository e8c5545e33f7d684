#pragma once
// Private: the device cache and run-time factories.

#include <roster/device.hpp>
#include <roster/detail/backend-inl.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

namespace roster {
namespace detail {

enum : std::uint8_t { slot_empty = 0, slot_opened = 1, slot_failed = 2 };

// One normalized spec's entry. Slots are never freed: a pointer read from any
// table stays valid, so the hit path needs no lock and no reference count.
struct cache_slot {
  std::string key;        // the normalized spec
  std::mutex open_mutex;  // serialises the one open of this spec
  std::atomic<std::uint8_t> state{slot_empty};
  device* opened = nullptr;          // written before state turns slot_opened
  std::unique_ptr<device> owner;     // never released: the cache owns the device for the process
  std::optional<roster::error> failure;
};

// One spelling of a spec that leads to a slot: its normalized text, and each
// other text a caller passed ("CUDA", " cuda:0 "), so a repeated call skips
// normalizing. Immutable once published; never freed.
struct cache_spelling {
  std::uint64_t words[spec_key_capacity / 8] = {};  // the text, zero padded
  std::size_t size = 0;
  std::uint64_t hash = 0;
  cache_slot* slot = nullptr;
};

// Most spellings kept besides the normalized ones; beyond it, a new spelling
// is still a hit, through the normalizer.
inline constexpr std::size_t max_extra_spellings = 1024;

// An immutable open-addressing table of spellings (power-of-two size, linear
// probing, at most a quarter full), rebuilt whole on insert.
struct cache_table {
  std::vector<const cache_spelling*> spellings;  // every spelling, for rebuilding
  std::vector<const cache_spelling*> entries;    // the hash table; empty entries are null
  std::size_t mask = 0;
  std::size_t extra = 0;                         // spellings that are not normalized keys
  const cache_table* retired_next = nullptr;     // old tables stay readable
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

// Whether a text fits a spelling's words with its zero padding.
constexpr bool fits_spelling(std::size_t n) noexcept { return n + 8 <= spec_key_capacity; }

// The lookup of the hit path: a text zero padded to whole words.
[[gnu::always_inline]] inline cache_slot* find_spelling(const cache_table* t, const char* text,
                                                        std::size_t n) noexcept {
  const std::uint64_t hash = spec_hash_padded(text, n);
  for (std::size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
    const cache_spelling* e = t->entries[i];
    if (e == nullptr) return nullptr;
    if (e->hash != hash || e->size != n) continue;
    bool same = true;
    for (std::size_t w = 0; w < n; w += 8) {
      std::uint64_t word;
      std::memcpy(&word, text + w, 8);
      same &= word == e->words[w / 8];
    }
    if (same) return e->slot;
  }
}

// Looks a text up, padding it first; null when absent or too long.
inline cache_slot* find_text(const cache_table* t, std::string_view text) noexcept {
  if (t == nullptr || !fits_spelling(text.size())) return nullptr;
  char padded[spec_key_capacity] = {};
  std::memcpy(padded, text.data(), text.size());
  return find_spelling(t, padded, text.size());
}

inline const cache_spelling* make_spelling(std::string_view text, cache_slot* slot) {
  auto* s = new cache_spelling;
  std::memcpy(s->words, text.data(), text.size());
  s->size = text.size();
  s->hash = spec_hash_padded(reinterpret_cast<const char*>(s->words), s->size);
  s->slot = slot;
  return s;
}

// Publishes a table holding these spellings; cache mutex held.
inline void publish_table(device_cache& c, std::vector<const cache_spelling*> spellings, std::size_t extra) {
  const cache_table* old = c.current.load(std::memory_order_relaxed);
  auto* t = new cache_table;
  std::size_t size = 16;
  while (size < 4 * spellings.size()) size *= 2;  // at most a quarter full: a miss stops soon
  t->entries.assign(size, nullptr);
  t->mask = size - 1;
  for (const cache_spelling* s : spellings) {
    std::size_t i = s->hash & t->mask;
    while (t->entries[i] != nullptr) i = (i + 1) & t->mask;
    t->entries[i] = s;
  }
  t->spellings = std::move(spellings);
  t->extra = extra;
  t->retired_next = old;
  c.current.store(t, std::memory_order_release);
}

// Normalized keys too long for a spelling (a type past spec_type_max) live
// here; the hit path never sees them.
inline std::vector<cache_slot*>& long_keys() {
  static std::vector<cache_slot*> v;
  return v;
}

inline expected<device*> get_device_slow(std::string_view text) noexcept {
  try {
    auto spec = parse_spec(text);
    if (!spec) return std::move(spec).error();
    const std::string key = spec->str();
    auto& c = the_device_cache();
    cache_slot* slot = nullptr;
    {
      std::lock_guard lock(c.mutex);
      const cache_table* t = c.current.load(std::memory_order_acquire);
      if (fits_spelling(key.size())) {
        slot = find_text(t, key);
      } else {
        for (cache_slot* s : long_keys())
          if (s->key == key) slot = s;
      }
      std::vector<const cache_spelling*> spellings;
      std::size_t extra = t != nullptr ? t->extra : 0;
      if (t != nullptr) spellings = t->spellings;
      const std::size_t before = spellings.size();
      if (slot == nullptr) {
        auto fresh = std::make_unique<cache_slot>();
        fresh->key = key;
        if (fits_spelling(key.size())) spellings.push_back(make_spelling(key, fresh.get()));
        else long_keys().push_back(fresh.get());
        slot = fresh.release();
      }
      // Remember this caller's spelling, so the next call skips normalizing.
      if (text != key && fits_spelling(text.size()) && extra < max_extra_spellings && find_text(t, text) == nullptr) {
        spellings.push_back(make_spelling(text, slot));
        ++extra;
      }
      if (spellings.size() != before) publish_table(c, std::move(spellings), extra);
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
    auto fresh_for = [](cache_slot* s) {
      auto* fresh = new cache_slot;
      fresh->key = s->key;
      return fresh;
    };
    for (auto& s : long_keys())
      if (s->state.load(std::memory_order_acquire) == slot_failed) s = fresh_for(s);
    const cache_table* old = c.current.load(std::memory_order_relaxed);
    if (old == nullptr) return;
    std::vector<std::pair<cache_slot*, cache_slot*>> replaced;  // failed -> fresh
    std::vector<const cache_spelling*> spellings;
    spellings.reserve(old->spellings.size());
    // Each slot's normalized spelling comes before its other spellings.
    for (const cache_spelling* s : old->spellings) {
      if (s->slot->state.load(std::memory_order_acquire) != slot_failed) {
        spellings.push_back(s);
        continue;
      }
      cache_slot* fresh = nullptr;
      for (auto& [from, to] : replaced)
        if (from == s->slot) fresh = to;
      if (fresh == nullptr) {
        fresh = fresh_for(s->slot);
        replaced.emplace_back(s->slot, fresh);
      }
      spellings.push_back(make_spelling(
          std::string_view(reinterpret_cast<const char*>(s->words), s->size), fresh));
    }
    publish_table(c, std::move(spellings), old->extra);
  } catch (...) {
    // Out of memory: the failures stay cached; a later rescan retries.
  }
}

}  // namespace detail

ROSTER_INLINE expected<device*> get_device(std::string_view spec) noexcept {
  // A local reference: the_device_cache() is exported, so calling it would go through the PLT.
  static detail::device_cache& cache = detail::the_device_cache();
  if (const detail::cache_table* t = cache.current.load(std::memory_order_acquire)) [[likely]] {
    char text[detail::spec_key_capacity];
    detail::cache_slot* slot = nullptr;
    // The spelling as given (seen before), else its normalized form.
    if (detail::fits_spelling(spec.size())) [[likely]] {
      std::memcpy(text, spec.data(), spec.size());
      std::memset(text + spec.size(), 0, 8);
      slot = detail::find_spelling(t, text, spec.size());
    }
    if (slot == nullptr) {
      if (const std::size_t n = detail::normalize_spec_into(spec, text); n != 0)
        slot = detail::find_spelling(t, text, n);
    }
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
