#pragma once
// The bodies of detail/backend/backend_id.hpp that read the claims: compiled into the
// library, or included by backend_id.hpp in header-only mode.

#include <roster/detail/backend/backend_id.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace roster::detail {

// One backend type registered at several sites of one module shares one
// registration object. The same library linked into two modules gives two
// objects whose claims agree in every field and share a registration site;
// anything else is another backend, even with one id, type name and site
// (two files that -ffile-prefix-map maps to one name).
ROSTER_INLINE bool same_backend(std::span<const backend_claim* const> claims, const backend_claim& a,
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

ROSTER_INLINE std::string describe_claim(const backend_claim& c) {
  return "'" + std::string(c.id) + "' (rank " + std::to_string(c.rank) + ", " +
         std::string(c.type != nullptr ? c.type() : std::string_view("?")) + ") at " +
         (c.site != nullptr ? c.site : "?");
}

ROSTER_INLINE std::optional<error> backend_conflict(std::string_view id) {
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

ROSTER_INLINE std::string keep_backend_fix(std::string_view id) {
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
