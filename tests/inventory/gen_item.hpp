#pragma once
// The entry type of the generated inventories (tests and benchmarks).

#include <roster/inventory.hpp>

#include <cstdint>

/// One generated entry: its key and a check value derived from it.
struct gen_item {
  std::uint32_t id;
  std::uint32_t check;
  /// Returns the inventory key.
  [[nodiscard]] constexpr std::uint32_t key() const noexcept { return id; }
};

/// Returns the check value the generator stores for a key.
constexpr std::uint32_t gen_check(std::uint32_t id) noexcept {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(id) * 2654435761u) & 0xffffffffu);
}
