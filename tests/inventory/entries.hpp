#pragma once
// Entry types of the inventory tests; each test uses its own type so that
// one collection never depends on another.

#include <roster/inventory.hpp>

#include <cstdint>
#include <string_view>

namespace inv_test {

/// A keyed entry: a name and a value.
struct item {
  std::string_view name;
  int value = 0;
  /// Returns the inventory key.
  [[nodiscard]] constexpr std::string_view key() const noexcept { return name; }
};

// Distinct types with item's layout, one per test.
struct exe_item : item {};
struct header_item : item {};
struct conflict_item : item {};
struct race_item : item {};
struct none_item : item {};
struct shared_item : item {};
struct plugin_item : item {};
struct plugin_probe_item : item {};
struct common_item : item {};
struct archive_item : item {};
struct gc_item : item {};
struct lto_item : item {};
struct linker_item : item {};
struct header_only_item : item {};

/// An entry with no key: sorted by submission site, deduplicated by site.
struct note {
  std::string_view text;
};

/// Entries of 48, 64 and 200 bytes and ones over-aligned to 64 and 256.
struct sized_48 {
  std::uint64_t id;
  char pad[40];
  [[nodiscard]] constexpr std::uint64_t key() const noexcept { return id; }
};
struct sized_64 {
  std::uint64_t id;
  char pad[56];
  [[nodiscard]] constexpr std::uint64_t key() const noexcept { return id; }
};
struct sized_200 {
  std::uint64_t id;
  char pad[192];
  [[nodiscard]] constexpr std::uint64_t key() const noexcept { return id; }
};
struct alignas(64) aligned_64 {
  std::uint64_t id;
  [[nodiscard]] constexpr std::uint64_t key() const noexcept { return id; }
};
struct alignas(256) aligned_256 {
  std::uint64_t id;
  [[nodiscard]] constexpr std::uint64_t key() const noexcept { return id; }
};
static_assert(sizeof(sized_48) == 48 && sizeof(sized_64) == 64 && sizeof(sized_200) == 200);
static_assert(alignof(aligned_64) == 64 && sizeof(aligned_64) == 64);
static_assert(alignof(aligned_256) == 256 && sizeof(aligned_256) == 256);

}  // namespace inv_test
