#pragma once
// Private: the device cache and run-time factories.

#include <roster/acquire.hpp>
#include <roster/device_cache.hpp>
#include <roster/tuning/store.hpp>
#include <roster/detail/backend/spec_key.hpp>

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
// normalizing. `opened` is the slot's device once it is open, so a hit reads
// nothing but the table. An entry is filled once, under the cache mutex, and
// `size` is stored last: a reader that sees it non-zero sees the rest.
struct cache_entry {
  std::atomic<std::size_t> size{0};  // characters; 0 marks an empty entry
  std::uint64_t hash = 0;
  std::atomic<device*> opened{nullptr};
  std::atomic<cache_slot*> slot{nullptr};    // the spec's one slot, for the process
  std::uint64_t words[spelling_words] = {};  // the text, zero padded
};

// An open-addressing table of spellings (power-of-two size, linear probing,
// at most a quarter full). New spellings are filled in place; only a full
// table is copied, into one twice its size, so the tables retired (kept, as a
// reader may still be probing one) together take less than the current one:
// memory grows linearly with the spellings, and a hit needs no reclamation
// scheme, no lock and no count.
struct cache_table {
  std::size_t mask = 0;
  std::size_t used = 0;                        // filled entries; cache mutex
  std::unique_ptr<cache_entry[]> storage;      // mask + 1 entries
  const cache_entry* entries = nullptr;        // storage.get(), for the hit path
  const cache_table* retired_next = nullptr;   // old tables stay readable
};

struct device_cache {
  std::mutex mutex;  // serialises inserts and rescans, never taken on a hit
  std::atomic<cache_table*> current{nullptr};
  std::size_t extra = 0;  // spellings that are not normalized keys; mutex
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
    const std::size_t size = e.size.load(std::memory_order_acquire);
    if (size == 0) return nullptr;
    if (e.hash != hash || size != n) continue;
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

// Fills a free entry of t; cache mutex held, t has room.
inline void place_spelling(cache_table& t, std::uint64_t hash, const std::uint64_t* words, std::size_t size,
                           cache_slot* slot) noexcept {
  std::size_t i = hash & t.mask;
  while (t.storage[i].size.load(std::memory_order_relaxed) != 0) i = (i + 1) & t.mask;
  cache_entry& e = t.storage[i];
  e.hash = hash;
  std::copy(words, words + spelling_words, e.words);
  e.slot.store(slot, std::memory_order_relaxed);
  if (slot->state.load(std::memory_order_acquire) == slot_opened) e.opened.store(slot->opened, std::memory_order_relaxed);
  e.size.store(size, std::memory_order_release);
  ++t.used;
}

// Adds one spelling of a slot; cache mutex held. Copies the table into one
// twice its size only when it would pass a quarter full.
inline void add_spelling(device_cache& c, std::string_view text, cache_slot* slot) {
  cache_table* t = c.current.load(std::memory_order_relaxed);
  if (t == nullptr || 4 * (t->used + 1) > t->mask + 1) {
    std::size_t size = t == nullptr ? 16 : 2 * (t->mask + 1);
    auto* grown = new cache_table;
    grown->storage.reset(new cache_entry[size]);
    grown->entries = grown->storage.get();
    grown->mask = size - 1;
    if (t != nullptr)
      for (std::size_t i = 0; i <= t->mask; ++i) {
        const cache_entry& e = t->storage[i];
        if (const std::size_t n = e.size.load(std::memory_order_relaxed); n != 0)
          place_spelling(*grown, e.hash, e.words, n, e.slot.load(std::memory_order_relaxed));
      }
    grown->retired_next = t;
    c.current.store(grown, std::memory_order_release);
    t = grown;
  }
  std::uint64_t w[spelling_words] = {};
  const std::size_t words = load_spelling(text, w);
  place_spelling(*t, spelling_hash(w, words, text.size()), w, text.size(), slot);
}

// Normalized keys too long for a spelling (a type past spec_type_max) live
// here; the hit path never sees them.
// Never destroyed, like the slots: LeakSanitizer must still reach them at exit.
ROSTER_API inline std::vector<cache_slot*>& long_keys() {
  static auto* v = new std::vector<cache_slot*>;
  return *v;
}
// Opens a device for the cache: through the one open path, with the tuning
// records the process has in use (read by a decision or handed over by the
// application; opening a device reads none).
inline expected<std::unique_ptr<device>> open_cached(const device_spec& spec) {
  backends_in_use pin;
  auto backend = backend_for(spec);
  if (!backend) return std::move(backend).error();
  acquire_options options;
  options.tuning = tuning_in_use();
  return open(**backend, spec, options);
}

}  // namespace detail

ROSTER_INLINE expected<device*> detail::cached_device(const device_spec& spec, std::string_view text) noexcept {
  try {
    const std::string key = spec.str();
    auto& c = the_device_cache();
    cache_slot* slot = nullptr;
    {
      std::lock_guard lock(c.mutex);
      const cache_table* t = c.current.load(std::memory_order_relaxed);
      if (fits_spelling(key.size())) {
        if (const cache_entry* e = find_text(t, key)) slot = e->slot.load(std::memory_order_relaxed);
      } else {
        for (cache_slot* s : long_keys())
          if (s->key == key) slot = s;
      }
      if (slot == nullptr) {
        auto fresh = std::make_unique<cache_slot>();
        fresh->key = key;
        if (fits_spelling(key.size())) add_spelling(c, key, fresh.get());
        else long_keys().push_back(fresh.get());
        slot = fresh.release();
      }
      // Remember this caller's spelling, so the next call skips normalizing.
      if (!text.empty() && text != key && fits_spelling(text.size()) && c.extra < max_extra_spellings &&
          find_text(c.current.load(std::memory_order_relaxed), text) == nullptr) {
        add_spelling(c, text, slot);
        ++c.extra;
      }
    }
    bool opened_now = false;
    std::optional<roster::error> failed;  // read under the slot's lock: rescan() clears it in place
    {
      std::lock_guard open_lock(slot->open_mutex);
      if (slot->state.load(std::memory_order_acquire) == slot_empty) {
        auto d = open_cached(spec);
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
      if (slot->state.load(std::memory_order_acquire) == slot_failed) failed = *slot->failure;
    }
    if (opened_now) {
      // Hits find the device in the table itself from now on.
      std::lock_guard lock(c.mutex);
      if (cache_table* t = c.current.load(std::memory_order_relaxed))
        for (std::size_t i = 0; i <= t->mask; ++i)
          if (cache_entry& e = t->storage[i]; e.slot.load(std::memory_order_relaxed) == slot)
            e.opened.store(slot->opened, std::memory_order_release);
    }
    if (failed) return std::move(*failed);
    return slot->opened;
  } catch (...) {
    return make_error(errc::out_of_memory, "out of memory", "free memory");
  }
}

namespace detail {
inline expected<device*> get_device_slow(std::string_view text) noexcept {
  try {
    auto spec = parse_spec(text);
    if (!spec) return std::move(spec).error();
    return cached_device(*spec, text);
  } catch (...) {
    return make_error(errc::out_of_memory, "out of memory", "free memory");
  }
}

// Clears every failed slot in place, so the next request retries. A slot is
// never replaced: memory stays bounded by the specs asked for, however often
// a failing spec is retried across rescans (a fresh slot per failed spec and
// rescan, kept for good, grew by 11 MB in 40,000 cycles). Readers of a
// failure copy it under the slot's lock; the hit path reads only `opened`,
// which a failed slot never had.
inline void forget_failures() noexcept {
  auto& c = the_device_cache();
  std::lock_guard lock(c.mutex);
  auto clear = [](cache_slot* s) {
    if (s == nullptr || s->state.load(std::memory_order_acquire) != slot_failed) return;
    std::lock_guard open_lock(s->open_mutex);  // no open runs on a failed slot: only a reader's copy
    s->state.store(slot_empty, std::memory_order_release);
    s->failure.reset();
  };
  for (cache_slot* s : long_keys()) clear(s);
  if (const cache_table* t = c.current.load(std::memory_order_relaxed))
    for (std::size_t i = 0; i <= t->mask; ++i) clear(t->storage[i].slot.load(std::memory_order_relaxed));
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
      if (device* d = e->opened.load(std::memory_order_acquire)) [[likely]]
        return d;
      const detail::cache_slot* s = e->slot.load(std::memory_order_acquire);
      if (s->state.load(std::memory_order_acquire) == detail::slot_opened) return s->opened;
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
      auto* entry = new detail::runtime_backend{parsed->backend, {}, rank, factory};
      entry->registration = backend_registration{entry->id, nullptr, enumerator, op_set::all(), 0};
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
