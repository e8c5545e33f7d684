#pragma once
/// Linux sysfs text, read one way by roster's core (the GPU list behind the
/// vendor masks) and by the backends that look at the PCI bus themselves.

#include <cstdint>
#include <string_view>

namespace roster {

/// Parses a sysfs id such as a PCI vendor, device or class ("0x10de", or
/// "10de" without the prefix): at most 8 hex digits; 0 when the text is
/// empty, longer, or not hexadecimal.
[[nodiscard]] constexpr std::uint32_t parse_hex_id(std::string_view s) noexcept {
  if (s.starts_with("0x") || s.starts_with("0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return 0;
  std::uint32_t v = 0;
  for (char c : s) {
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
    else return 0;
  }
  return v;
}

}  // namespace roster
