#pragma once
/// The device cache: one live device per normalized spec for the life of the
/// process, and factories registered at run time beside the inventory's.

#include <roster/acquire.hpp>
#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace roster {

namespace detail {
// Longest normalized spec the hit path handles on the stack; a longer one
// still works, through parse_spec.
inline constexpr std::size_t spec_key_capacity = 64;

inline constexpr bool is_spec_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Writes the normalized spec ("cuda:1") into out without allocating and
// returns its length; returns 0 for anything it does not handle (a malformed
// spec, a non-ASCII or over-long type), which the caller then gives to
// parse_spec. Where it answers, it agrees with parse_spec(text)->str().
inline std::size_t normalize_spec_into(std::string_view text, char (&out)[spec_key_capacity]) noexcept {
  while (!text.empty() && is_spec_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_spec_space(text.back())) text.remove_suffix(1);
  const std::size_t colon = text.find(':');
  const std::string_view type = text.substr(0, colon);
  if (type.empty() || type.size() > spec_key_capacity - 12) return 0;
  std::size_t n = 0;
  for (char c : type) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return 0;
    out[n++] = c;
  }
  out[n++] = ':';
  if (colon == std::string_view::npos) {
    out[n++] = '0';
    return n;
  }
  const std::string_view ord = text.substr(colon + 1);
  if (ord.empty()) return 0;
  std::uint64_t value = 0;
  for (char c : ord) {
    if (c < '0' || c > '9') return 0;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > 0x7fffffffu) return 0;
  }
  char digits[10];
  std::size_t d = 0;
  do {
    digits[d++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (d > 0) out[n++] = digits[--d];
  return n;
}

constexpr std::uint64_t spec_hash(std::string_view key) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}
}  // namespace detail

/// Returns the cached device for a spec ("CPU", "cuda:1", " Vulkan:0 "), opening
/// it with roster::acquire on the first request. The spec is normalized first
/// (type lower case, ordinal defaulting to 0), so "CUDA" and "cuda:0" are one
/// device. The cache owns the device until the process ends: do not delete it.
/// Concurrent first requests open it once; a hit takes no lock and does not
/// allocate. A failed open is cached too: later calls return the same error
/// without retrying until roster::rescan(). (Named get_device because
/// roster::device is the device class.)
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<device*> get_device(std::string_view spec) noexcept;

/// Forgets cached failures, so the next get_device retries them, and
/// re-enumerates the circuits (their indices may change). Opened devices stay.
ROSTER_API ROSTER_INLINE void rescan() noexcept;

/// The factory of a backend registered at run time: opens adapter `ordinal`.
using factory_fn = expected<std::unique_ptr<device>> (*)(std::uint32_t ordinal);
/// The enumerator of a backend registered at run time: lists its adapters.
using enumerator_fn = expected<std::vector<adapter_info>> (*)();

/// Registers a backend at run time under a type name (case-insensitive; stored
/// lower case), beside the backends of the inventory: specs, get_device,
/// acquire, registered_backends and circuits see it. Implies rescan(). A name
/// already taken is an errc::conflict error. The enumerator may be null (the
/// backend then adds no adapters to circuits). The factory must not throw;
/// roster guards it anyway.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> register_factory(std::string_view type_name, factory_fn factory,
                                                                       enumerator_fn enumerator,
                                                                       int rank = unranked) noexcept;

/// Returns the normalized text of a spec ("cuda:1"), or the parse error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::string> normalize_spec(std::string_view spec);

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/device-inl.hpp>
#endif
