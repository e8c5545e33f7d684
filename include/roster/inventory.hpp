#pragma once
/// The link-time inventory: objects submitted anywhere in the process with
/// ROSTER_SUBMIT, collected from a linker section and frozen into a span.

#include <roster/config.hpp>
#include <roster/detail/inventory/inventory_hub.hpp>
#include <roster/detail/inventory/platform/object_format.hpp>

#include <atomic>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

namespace roster {

/// A type whose entries are sorted and deduplicated by `key()`.
template <class T>
concept keyed_entry = requires(const T& t) {
  { t.key() } -> std::totally_ordered;
};

/// Collection figures for one inventory type.
struct inventory_stats {
  std::size_t entries = 0;          ///< entries in the snapshot
  std::size_t duplicates = 0;       ///< same submission linked into several modules, dropped
  std::size_t conflicts = 0;        ///< different submissions with one key, all but one dropped
  std::size_t modules = 0;          ///< modules whose sections were walked
  std::uint64_t collect_ns = 0;     ///< time the collection took
  std::uint64_t generation = 0;     ///< bumps whenever a module is loaded or unloaded
  const char* kept_site = nullptr;     ///< first conflict: the submission kept
  const char* dropped_site = nullptr;  ///< first conflict: the submission dropped
};

namespace detail {

// Orders two gathered entries by T's key, then by module load order, then site.
template <class T>
bool key_less(const walk_entry& a, const walk_entry& b) noexcept {
  const auto& ka = static_cast<const T*>(a.object)->key();
  const auto& kb = static_cast<const T*>(b.object)->key();
  if (ka < kb) return true;
  if (kb < ka) return false;
  return tie_less(a, b);
}

// Orders two entries of a type without a key by site first, so the copies of
// one site linked into several modules are adjacent for the duplicate pass.
inline bool site_less(const walk_entry& a, const walk_entry& b) noexcept {
  int c = std::strcmp(a.site, b.site);
  if (c != 0) return c < 0;
  return tie_less(a, b);
}

// Sorts gathered entries by T's key (a type without a key by site), then by
// module load order, then site. An integral key is copied into the entries
// and radix-sorted inline, reading no object while sorting: that sort is most
// of a large collection's time. Other keys (backend ids, kernel keys: tens of
// entries) go through an out-of-line sort with key_less<T>.
template <class T>
void sort_entries(walk_entry* first, walk_entry* last, walk_entry* scratch) noexcept {
  if constexpr (keyed_entry<T>) {
    using key_type = std::remove_cvref_t<decltype(std::declval<const T&>().key())>;
    if constexpr (std::is_integral_v<key_type> && sizeof(key_type) <= sizeof(std::uint64_t)) {
      for (walk_entry* e = first; e != last; ++e) {
        auto k = static_cast<const T*>(e->object)->key();
        auto bits = static_cast<std::uint64_t>(static_cast<std::make_unsigned_t<key_type>>(k));
        // Signed: flip the sign bit so the unsigned order is the signed one.
        if constexpr (std::is_signed_v<key_type>) bits ^= std::uint64_t{1} << (8 * sizeof(key_type) - 1);
        e->key_bits = bits;
      }
      sort_by_key_bits(first, last, scratch);
    } else {
      (void)scratch;
      sort_by(first, last, &key_less<T>);
    }
  } else {
    (void)scratch;
    sort_by(first, last, &site_less);
  }
}

template <class T>
bool entry_same_key(const void* a, const void* b) noexcept {
  if constexpr (keyed_entry<T>) {
    return static_cast<const T*>(a)->key() == static_cast<const T*>(b)->key();
  } else {
    (void)a, (void)b;
    return false;
  }
}

template <class T>
inventory_slot& slot_of() noexcept {
  // constinit: no guard variable, so the hit path is one acquire load. The
  // ops are held by value: a separate variable template referenced from here
  // lands in another COMDAT group, and GCC's ASan build then discards it
  // under this slot's group ("defined in discarded section" at link time).
  // (Braces, not an entry_ops temporary: nvcc's front end then refuses constinit.)
  static constinit inventory_slot slot{{&type_key<T>, &type_name<T>, &sort_entries<T>, &entry_same_key<T>,
                                        keyed_entry<T>}};
  return slot;
}

}  // namespace detail

/// Returns the frozen inventory of T: every object submitted with ROSTER_SUBMIT(T, ...)
/// in any loaded module, sorted by key, one entry per key.
template <class T>
[[nodiscard]] std::span<const T* const> inventory() noexcept {
  auto& slot = detail::slot_of<T>();
  const detail::snapshot* s = slot.current.load(std::memory_order_acquire);
  if (s == nullptr) [[unlikely]] {
    detail::register_this_module();
    s = detail::collect(slot);
  }
  return {reinterpret_cast<const T* const*>(s->entries()), s->count};
}

/// Returns how the current inventory of T was collected.
template <class T>
[[nodiscard]] inventory_stats inventory_info() noexcept {
  (void)inventory<T>();
  return detail::stats_of(detail::slot_of<T>());
}

/// Returns how many collections of any type have run in this process.
[[nodiscard]] inline std::uint64_t inventory_collections() noexcept {
  return detail::hub_collections();
}

}  // namespace roster

// The section holds fixed 16-byte records written by the assembler, not the
// objects: compilers over-align and reorder objects in a section, and ASan
// pads them; the assembler's records are never padded nor instrumented, and
// the walk skips zero records. See detail/inventory/inventory_hub.hpp for the layout.
// The record is emitted from inside the getter (ROSTER_IMPL_RECORD_ASM, the
// format's), the one place where GCC and Clang accept an extended asm with
// the operands it needs (the type key, the getter and the site string, each a
// link-time constant): namespace-scope asm takes no operands before GCC 15.
// The getter is never inlined nor called except by the collection.
#define ROSTER_IMPL_SUBMIT(T, object, name) ROSTER_IMPL_SUBMIT_WHEN(T, true, object, name)

// A submission whose getter returns null when `condition` (a constant
// expression) is false: the collection skips it, so a macro can submit a
// fixed list of objects of which only some apply (a backend's built-in ops).
#define ROSTER_IMPL_SUBMIT_WHEN(T, condition, object, name)                                      \
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(object)>, T>,                     \
                "ROSTER_SUBMIT(T, object): object must be of type T");                        \
  [[ROSTER_IMPL_GETTER_ATTRIBUTES]] static const void* ROSTER_IMPL_CAT(name, _get)() noexcept { \
    static constexpr char site[] = __FILE__ ":" ROSTER_IMPL_STR(__LINE__);                     \
    ROSTER_IMPL_RECORD_ASM(T, ROSTER_IMPL_CAT(name, _get), site);                              \
    if constexpr (static_cast<bool>(condition)) return &(object);                              \
    else return nullptr;                                                                       \
  }                                                                                            \
  static_assert(true, "")

/// Submits `object` (constinit, of type T) when `condition`, a constant
/// expression, is true; otherwise the submission is skipped at collection.
#define ROSTER_IMPL_SUBMIT_IF(T, condition, object) \
  ROSTER_IMPL_SUBMIT_WHEN(T, condition, object, ROSTER_IMPL_CAT(roster_submission_, __COUNTER__))

/// Submits a constinit object of type T to T's inventory; use at namespace scope.
#define ROSTER_SUBMIT(T, object) ROSTER_IMPL_SUBMIT(T, object, ROSTER_IMPL_CAT(roster_submission_, __COUNTER__))

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/inventory/inventory-inl.hpp>
#endif
