#pragma once
// Private: what a backend id may be, and the claim each ROSTER_REGISTER_BACKEND
// submits, which tells one backend linked twice (the same claim in several
// modules: a duplicate, harmless) from two backends sharing an id (a conflict).

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/program.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace roster::detail {

/// Longest backend id a device spec accepts.
inline constexpr std::size_t max_backend_id = 64;

/// Returns whether a device spec can name this id: 1 to 64 ASCII letters,
/// digits, '_' or '-' (the TYPE of TYPE:ORDINAL, see parse_spec).
constexpr bool valid_backend_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > max_backend_id) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-';
    if (!ok) return false;
  }
  return true;
}

/// One backend registration with everything that tells two backends apart.
/// Keyed by (id, address), so the inventory keeps every claim of every module
/// and the conflict check below sees them all.
struct backend_claim {
  const void* registration;  // &registration_of<B>: one object per type and module
  std::string_view id;
  int rank;
  bool dispatches;
  op_set ops;
  std::string_view (*type)() noexcept;  // type_name<B>; a pointer, see entry_ops
  const char* site;                      // "file:line" of ROSTER_REGISTER_BACKEND
  [[nodiscard]] std::pair<std::string_view, std::uintptr_t> key() const noexcept {
    return {id, reinterpret_cast<std::uintptr_t>(this)};
  }
};

inline char lower_ascii(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool same_id_ignoring_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  return true;
}

inline std::string_view site_of(const backend_claim& c) noexcept { return c.site != nullptr ? c.site : ""; }

// Whether two claims are one backend (see backend_id-inl.hpp).
[[nodiscard]] ROSTER_API ROSTER_INLINE bool same_backend(std::span<const backend_claim* const> claims,
                                                         const backend_claim& a, const backend_claim& b) noexcept;

/// Returns the conflict among the backends whose id equals `id` ignoring case
/// (every id when `id` is empty), or nothing when each is one backend.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<error> backend_conflict(std::string_view id);

/// Returns the Fix: for a backend that is not registered: one way to keep its
/// registration for each way of linking it (a static archive member that
/// nothing references is dropped by the linker).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string keep_backend_fix(std::string_view id);

}  // namespace roster::detail

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/backend_id-inl.hpp>
#endif
