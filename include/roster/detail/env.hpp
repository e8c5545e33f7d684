#pragma once
// Private: the environment. The one place roster's core reads a variable
// (with getenv), the one flag parser, and the one trace sink ("roster: "
// on stderr while ROSTER_TRACE is on). scripts/check-layers fails on a
// getenv anywhere else under include/roster.

#include <roster/detail/text.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace roster::detail {

// The variables the core reads (docs/design.md and the guide list what each does).
inline constexpr const char* env_device = "ROSTER_DEVICE";
inline constexpr const char* env_device_selector = "ROSTER_DEVICE_SELECTOR";
inline constexpr const char* env_plugin_path = "ROSTER_PLUGIN_PATH";
inline constexpr const char* env_trace = "ROSTER_TRACE";
inline constexpr const char* env_require = "ROSTER_REQUIRE";
inline constexpr const char* env_sysfs_root = "ROSTER_SYSFS_ROOT";
inline constexpr const char* env_bind_cpus = "ROSTER_BIND_CPUS";

/// Returns the value of an environment variable, or nullopt when it is unset.
inline std::optional<std::string_view> env_text(const char* name) noexcept {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string_view(v);
}

/// Returns the variable's value without surrounding spaces, or nullopt when
/// it is unset or blank.
inline std::optional<std::string_view> env_nonblank(const char* name) noexcept {
  auto v = env_text(name);
  if (!v || trim(*v).empty()) return std::nullopt;
  return v;
}

/// Returns whether a flag's text turns it on: set, not empty and not "0".
constexpr bool flag_on(std::optional<std::string_view> text) noexcept {
  return text.has_value() && !text->empty() && *text != "0";
}

/// Returns whether a flag variable is on (see flag_on).
inline bool env_flag(const char* name) noexcept { return flag_on(env_text(name)); }

/// Returns whether ROSTER_TRACE is on.
inline bool trace_on() noexcept { return env_flag(env_trace); }

/// Prints one trace line, "roster: LINE", to stderr while ROSTER_TRACE is on.
inline void trace(std::string_view line) noexcept {
  if (trace_on()) std::fprintf(stderr, "roster: %.*s\n", static_cast<int>(line.size()), line.data());
}

}  // namespace roster::detail
