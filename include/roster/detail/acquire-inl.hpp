#pragma once
// Private: spec parsing, wrappers and the router.

#include <roster/acquire.hpp>
#include <roster/detail/requirement.hpp>

#include <cctype>

namespace roster {

// Declared in tuning.hpp, which is included at the end of this file: tuning.hpp
// includes acquire.hpp through circuits.hpp, so including it first would cycle.
[[nodiscard]] ROSTER_API ROSTER_INLINE bool prefer_split_for(const adapter_info& a);

ROSTER_INLINE expected<device_spec> parse_spec(std::string_view text) {
  const std::string shown(text);
  auto bad = [&](std::string_view why) {
    return make_error(errc::invalid_argument, "device spec '" + shown + "': " + std::string(why),
                      "write a spec as TYPE or TYPE:ORDINAL, e.g. 'cpu', 'cuda:1', 'vulkan:0'");
  };
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) return bad("the spec is empty");
  device_spec spec;
  auto colon = text.find(':');
  std::string_view type = text.substr(0, colon);
  if (type.empty()) return bad("the type before ':' is missing");
  for (char c : type) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      return bad("the type may hold only letters, digits, '_' and '-'");
    spec.backend.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (colon == std::string_view::npos) return spec;
  std::string_view ord = text.substr(colon + 1);
  if (ord.empty()) return bad("the ordinal after ':' is missing");
  std::uint64_t value = 0;
  for (char c : ord) {
    if (c < '0' || c > '9') return bad("the ordinal must be a non-negative whole number");
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > 0x7fffffffu) return bad("the ordinal is larger than 2^31 - 1");
  }
  spec.ordinal = static_cast<std::uint32_t>(value);
  return spec;
}

ROSTER_INLINE std::string known_backends() {
  backends_in_use pin;
  std::string out;
  for (const auto& b : registered_backends()) {
    if (!out.empty()) out += ", ";
    out += b.id();
  }
  return out.empty() ? std::string("none") : out;
}

ROSTER_INLINE std::unique_ptr<device> apply_wrappers(std::unique_ptr<device> d, const acquire_options& options) {
  if (d == nullptr) return d;
  if (!d->caps().native_grid_sync || options.force_split || (options.use_tuning && prefer_split_for(d->adapter())))
    d = std::make_unique<grid_sync_split<device>>(std::move(d));
  return d;
}

ROSTER_INLINE expected<std::unique_ptr<device>> acquire(std::string_view text, const acquire_options& options) {
  auto spec = parse_spec(text);
  if (!spec) return std::move(spec).error();
  backends_in_use pin;  // from the lookup to the factory's return
  const backend_registration* backend = find_backend(spec->backend);
  if (backend == nullptr)
    return make_error(errc::not_found,
                      "device spec '" + std::string(text) + "': unknown type '" + spec->backend +
                          "'; known types: " + known_backends(),
                      "use one of the known types, or link the backend's library (Meson: link_whole, or "
                      "ROSTER_USE_BACKEND(name) in your program) so its registration is kept");
  auto d = open_adapter(*backend, spec->ordinal);
  if (!d) return std::move(d).error();
  // Strict mode: a device that falls short of ROSTER_REQUIRE is an error, not a fallback.
  auto req = detail::requirement_from_env();
  if (!req) return std::move(req).error();
  if (*req)
    if (auto why = (*req)->shortfall((*d)->adapter()); !why.empty())
      return make_error(errc::unavailable, "device spec '" + std::string(text) + "': " + why + " (strict mode)",
                        "name a device that satisfies ROSTER_REQUIRE, relax it, or unset it to allow this device");
  return apply_wrappers(std::move(*d), options);
}

ROSTER_INLINE expected<routed_device> acquire_preferred(const program& p) {
  if (auto ok = validate(p); !ok) return std::move(ok).error();
  return acquire_preferred(p.ops(), p.type());
}

ROSTER_INLINE expected<routed_device> acquire_preferred(op_set needed, element_type type) {
  routed_device out;
  backends_in_use pin;
  for (const auto& b : registered_backends()) {
    const std::string id(b.id());
    if (!b.dispatches) {
      out.passed.push_back({id, "emits code only; it does not dispatch on this host"});
      continue;
    }
    if (!b.registration->ops.contains(needed)) {
      std::string missing;
      for (std::size_t o = 0; o < op_count; ++o)
        if (needed.contains(static_cast<op>(o)) && !b.registration->ops.contains(static_cast<op>(o)))
          missing += (missing.empty() ? "" : ", ") + std::string(to_string(static_cast<op>(o)));
      out.passed.push_back({id, "does not support " + missing});
      continue;
    }
    auto d = open_adapter(*b.registration, 0);
    if (!d) {
      out.passed.push_back({id, d.error().message()});
      continue;
    }
    if (type == element_type::f64 && !(*d)->caps().f64) {
      out.passed.push_back({id, "its device has no double support"});
      continue;
    }
    out.device = apply_wrappers(std::move(*d));
    out.backend = id;
    return out;
  }
  std::string why;
  for (const auto& x : out.passed) why += "\n  " + x.backend + ": " + x.reason;
  return make_error(errc::unavailable, "no backend can run this program" + (why.empty() ? std::string(" (none registered)") : why),
                    "link a backend that runs every op of the program (the CPU backend runs all of them), or "
                    "relax the selector");
}

}  // namespace roster

#include <roster/tuning.hpp>
