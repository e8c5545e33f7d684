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

// One backend type registered at several sites of one module shares one
// registration object. The same library linked into two modules gives two
// objects whose claims agree in every field and share a registration site;
// anything else is another backend, even with one id, type name and site
// (two files that -ffile-prefix-map maps to one name).
inline bool same_backend(std::span<const backend_claim* const> claims, const backend_claim& a,
                         const backend_claim& b) noexcept {
  if (a.registration == b.registration) return true;
  if (a.id != b.id || a.rank != b.rank || a.dispatches != b.dispatches || a.ops != b.ops ||
      (a.type != nullptr ? a.type() : std::string_view()) != (b.type != nullptr ? b.type() : std::string_view()))
    return false;
  for (const auto* c : claims)
    if (c->registration == a.registration)
      for (const auto* d : claims)
        if (d->registration == b.registration && site_of(*c) == site_of(*d)) return true;
  return false;
}

inline std::string describe_claim(const backend_claim& c) {
  return "'" + std::string(c.id) + "' (rank " + std::to_string(c.rank) + ", " +
         std::string(c.type != nullptr ? c.type() : std::string_view("?")) + ") at " +
         (c.site != nullptr ? c.site : "?");
}

/// Returns the conflict among the backends whose id equals `id` ignoring case
/// (every id when `id` is empty), or nothing when each is one backend.
inline std::optional<error> backend_conflict(std::string_view id) {
  const auto claims = inventory<backend_claim>();
  for (std::size_t i = 0; i < claims.size(); ++i) {
    const backend_claim& a = *claims[i];
    if (!id.empty() && !same_id_ignoring_case(a.id, id)) continue;
    for (std::size_t j = i + 1; j < claims.size(); ++j) {
      const backend_claim& b = *claims[j];
      if (!same_id_ignoring_case(a.id, b.id) || same_backend(claims, a, b)) continue;
      std::string shown(a.id);
      for (char& c : shown) c = lower_ascii(c);
      std::string why;
      if (a.id != b.id)
        why = "; a device spec names a type without regard to case, so it cannot tell them apart";
      else if (site_of(a) == site_of(b))
        why = "; they share one registration site (as -ffile-prefix-map makes of two files) but are "
              "different backends";
      return error(errc::conflict,
                   "backend id '" + shown + "' is registered by two different backends: " + describe_claim(a) +
                       " and " + describe_claim(b) + why,
                   "give each backend its own id in ROSTER_REGISTER_BACKEND, or link only one of the two "
                   "libraries that register '" + shown + "'");
    }
  }
  return std::nullopt;
}

/// Returns the Fix: for a backend that is not registered: one way to keep its
/// registration for each way of linking it (a static archive member that
/// nothing references is dropped by the linker).
inline std::string keep_backend_fix(std::string_view id) {
  // The anchor is a C symbol: name it only for an id that can be one.
  bool symbol = !id.empty();
  for (char c : id) symbol = symbol && c != '-';
  const std::string n = symbol ? std::string(id) : std::string("<name>");
  return "use one of the known types, or link the backend's library so its registration is kept: "
         "Meson: dependency('roster-" + n + "') or link_whole; pkg-config: pkg-config --libs roster-" + n +
         "; CMake: target_link_libraries(app roster::" + n + "); a plain link: -Wl,--undefined=roster_backend_anchor_" +
         n + " -lroster_" + n + ", or -Wl,--whole-archive -lroster_" + n +
         " -Wl,--no-whole-archive; in code: ROSTER_USE_BACKEND(" + n + ")";
}

}  // namespace roster::detail
