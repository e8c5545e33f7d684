#pragma once
// Private: the device cache and run-time factories.

#include <roster/acquire.hpp>
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

// Most spellings kept besides the normalized ones; beyond it, a new spelling
// is still a hit, through the normalizer.
inline constexpr std::size_t max_extra_spellings = 1024;

// One spelling of a spec, inline in the table: its normalized text, or another
// text a caller passed ("CUDA", " cuda:0 "), so a repeated call skips
// normalizing. `opened` is the slot's device once it is open (the table is
// republished then), so a hit reads nothing but the table.
struct cache_entry {
  std::uint64_t hash = 0;
  std::size_t size = 0;  // characters; 0 marks an empty entry
  device* opened = nullptr;
  cache_slot* slot = nullptr;
  std::uint64_t words[spelling_words] = {};  // the text, zero padded
};

// An immutable open-addressing table of spellings (power-of-two size, linear
// probing, at most a quarter full), rebuilt whole on every change.
struct cache_table {
  std::size_t mask = 0;
  const cache_entry* entries = nullptr;         // the hash table, mask + 1 entries
  std::vector<cache_entry> storage;             // owns entries
  std::vector<cache_entry> spellings;           // every spelling, for rebuilding
  std::size_t extra = 0;                        // spellings that are not normalized keys
  const cache_table* retired_next = nullptr;    // old tables stay readable
};

struct device_cache {
  std::mutex mutex;  // serialises inserts and rescans, never taken on a hit
  std::atomic<const cache_table*> current{nullptr};
};

ROSTER_API ROSTER_INLINE device_cache& the_device_cache() noexcept {
  static constinit device_cache c;
  return c;
}

ROSTER_API ROSTER_INLINE std::atomic<std::uint64_t>& scan_generation() noexcept {
  static constinit std::atomic<std::uint64_t> g{0};
  return g;
}

// Whether a text can be a spelling.
constexpr bool fits_spelling(std::size_t n) noexcept { return n > 0 && n <= 8 * spelling_words; }

// The lookup of the hit path, over a spelling loaded as words.
[[gnu::always_inline]] inline const cache_entry* find_spelling(const cache_table* t, const std::uint64_t* w,
                                                               std::size_t words, std::size_t n) noexcept {
  const std::uint64_t hash = spelling_hash(w, words, n);
  for (std::size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
    const cache_entry& e = t->entries[i];
    if (e.size == 0) return nullptr;
    if (e.hash != hash || e.size != n) continue;
    bool same = true;
    for (std::size_t k = 0; k < words; ++k) same &= w[k] == e.words[k];
    if (same) return &e;
  }
}

inline const cache_entry* find_text(const cache_table* t, std::string_view text) noexcept {
  if (t == nullptr || !fits_spelling(text.size())) return nullptr;
  std::uint64_t w[spelling_words];
  const std::size_t words = load_spelling(text, w);
  return find_spelling(t, w, words, text.size());
}

inline cache_entry make_spelling(std::string_view text, cache_slot* slot) {
  cache_entry e;
  const std::size_t words = load_spelling(text, e.words);
  e.size = text.size();
  e.hash = spelling_hash(e.words, words, e.size);
  e.slot = slot;
  if (slot->state.load(std::memory_order_acquire) == slot_opened) e.opened = slot->opened;
  return e;
}

// Publishes a table holding these spellings; cache mutex held.
inline void publish_table(device_cache& c, std::vector<cache_entry> spellings, std::size_t extra) {
  const cache_table* old = c.current.load(std::memory_order_relaxed);
  auto* t = new cache_table;
  std::size_t size = 16;
  while (size < 4 * spellings.size()) size *= 2;  // at most a quarter full: a miss stops soon
  t->storage.assign(size, cache_entry{});
  t->mask = size - 1;
  for (auto& s : spellings) {
    if (s.opened == nullptr && s.slot->state.load(std::memory_order_acquire) == slot_opened) s.opened = s.slot->opened;
    std::size_t i = s.hash & t->mask;
    while (t->storage[i].size != 0) i = (i + 1) & t->mask;
    t->storage[i] = s;
  }
  t->entries = t->storage.data();
  t->spellings = std::move(spellings);
  t->extra = extra;
  t->retired_next = old;
  c.current.store(t, std::memory_order_release);
}

// Normalized keys too long for a spelling (a type past spec_type_max) live
// here; the hit path never sees them.
// Never destroyed, like the slots: LeakSanitizer must still reach them at exit.
ROSTER_API inline std::vector<cache_slot*>& long_keys() {
  static auto* v = new std::vector<cache_slot*>;
  return *v;
}
// Long-key slots that rescan() replaced: another thread may still hold one.
ROSTER_API inline std::vector<cache_slot*>& retired_long_keys() {
  static auto* v = new std::vector<cache_slot*>;
  return *v;
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
        if (const cache_entry* e = find_text(t, key)) slot = e->slot;
      } else {
        for (cache_slot* s : long_keys())
          if (s->key == key) slot = s;
      }
      std::vector<cache_entry> spellings;
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
    bool opened_now = false;
    {
      std::lock_guard open_lock(slot->open_mutex);
      if (slot->state.load(std::memory_order_acquire) == slot_empty) {
        auto d = acquire(key);
        if (d) {
          slot->owner = std::move(*d);
          slot->opened = slot->owner.get();
          slot->state.store(slot_opened, std::memory_order_release);
          opened_now = true;
        } else {
          slot->failure.emplace(std::move(d).error());
          slot->state.store(slot_failed, std::memory_order_release);
        }
      }
    }
    if (opened_now) {
      // Republish, so hits find the device in the table itself.
      std::lock_guard lock(c.mutex);
      const cache_table* t = c.current.load(std::memory_order_relaxed);
      if (t != nullptr) publish_table(c, t->spellings, t->extra);
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
      if (s->state.load(std::memory_order_acquire) == slot_failed) {
        retired_long_keys().push_back(s);
        s = fresh_for(s);
      }
    const cache_table* old = c.current.load(std::memory_order_relaxed);
    if (old == nullptr) return;
    std::vector<std::pair<cache_slot*, cache_slot*>> replaced;  // failed -> fresh
    std::vector<cache_entry> spellings = old->spellings;
    for (auto& s : spellings) {
      if (s.slot->state.load(std::memory_order_acquire) != slot_failed) continue;
      cache_slot* fresh = nullptr;
      for (auto& [from, to] : replaced)
        if (from == s.slot) fresh = to;
      if (fresh == nullptr) {
        fresh = fresh_for(s.slot);
        replaced.emplace_back(s.slot, fresh);
      }
      s.slot = fresh;
      s.opened = nullptr;
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
    std::uint64_t w[detail::spelling_words];
    const detail::cache_entry* e = nullptr;
    // The spelling as given (seen before), else its normalized form.
    if (detail::fits_spelling(spec.size())) [[likely]]
      e = detail::find_spelling(t, w, detail::load_spelling(spec, w), spec.size());
    if (e == nullptr) {
      char text[detail::spec_key_capacity];
      if (const std::size_t n = detail::normalize_spec_into(spec, text); n != 0)
        e = detail::find_spelling(t, w, detail::load_spelling({text, n}, w), n);
    }
    if (e != nullptr) [[likely]] {
      if (e->opened != nullptr) [[likely]]
        return e->opened;
      if (e->slot->state.load(std::memory_order_acquire) == detail::slot_opened) return e->slot->opened;
    }
  }
  return detail::get_device_slow(spec);
}

ROSTER_INLINE void rescan() noexcept {
  detail::forget_failures();
  detail::scan_generation().fetch_add(1, std::memory_order_acq_rel);
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
