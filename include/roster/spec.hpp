#pragma once
/// Device specs: the text that names an adapter ("CPU", "cuda:1",
/// " Vulkan:0 "), parsed in this one place.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace roster {

/// A parsed device spec: backend id (lower case) and ordinal.
struct device_spec {
  std::string backend;
  std::uint32_t ordinal = 0;
  /// Returns the normalized text, e.g. "cuda:1".
  [[nodiscard]] std::string str() const { return backend + ":" + std::to_string(ordinal); }
  friend bool operator==(const device_spec&, const device_spec&) = default;
};

/// Parses "CPU", "cuda:1", " Vulkan:0 ": type case-insensitive, ordinal
/// defaulting to 0, surrounding spaces ignored. Does not check the type exists.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<device_spec> parse_spec(std::string_view text);

/// Returns the normalized text of a spec ("cuda:1"), or the parse error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::string> normalize_spec(std::string_view spec);

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/spec-inl.hpp>
#endif
