#pragma once
// The entry type of the linker matrix program (scripts/linker-matrix).
#include <roster/inventory.hpp>

#include <string_view>

struct matrix_item {
  std::string_view name;
  /// Returns the inventory key.
  [[nodiscard]] constexpr std::string_view key() const noexcept { return name; }
};
