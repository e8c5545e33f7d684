#pragma once
// Private: the environment. The one place roster's core reads a variable
// (with getenv), the one flag parser, and the one trace sink ("roster: "
// on stderr while ROSTER_TRACE is on). scripts/check-layers fails on a
// getenv anywhere else under include/roster.

#include <roster/detail/base/text.hpp>

#include <atomic>
#include <cstdint>
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
inline constexpr const char* env_gpu_bind = "ROSTER_GPU_BIND";

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

/// Reads a boolean word: 1, true, yes, on / 0, false, no, off (any case,
/// surrounding spaces ignored); nullopt for anything else. The one boolean
/// parser: roster::env::parse_flag and every flag variable use it.
constexpr std::optional<bool> flag_word(std::string_view text) noexcept {
  text = trim(text);
  for (std::string_view yes : {"1", "true", "yes", "on"})
    if (iequal(text, yes)) return true;
  for (std::string_view no : {"0", "false", "no", "off"})
    if (iequal(text, no)) return false;
  return std::nullopt;
}

/// The words flag_word takes, for messages.
inline constexpr std::string_view flag_words = "one of 1, true, yes, on or 0, false, no, off";

/// What a boolean variable says: unset (or blank), on, off, or a word that is none of these.
enum class flag_state : std::uint8_t { unset, on, off, malformed };

/// Returns what a boolean variable says (see flag_word).
inline flag_state env_flag_state(const char* name) noexcept {
  const auto v = env_text(name);
  if (!v || trim(*v).empty()) return flag_state::unset;
  const auto b = flag_word(*v);
  return !b ? flag_state::malformed : *b ? flag_state::on : flag_state::off;
}

/// Returns whether a flag variable is on: a yes word. Unset, blank, a no word
/// or a malformed one is off; code that can return an error reads it with
/// roster::env::flag instead, which refuses a malformed one.
inline bool env_flag(const char* name) noexcept { return env_flag_state(name) == flag_state::on; }

/// Returns whether ROSTER_TRACE is on (a yes word). A malformed value leaves
/// tracing off and is said once on stderr, with its fix.
inline bool trace_on() noexcept {
  const flag_state s = env_flag_state(env_trace);
  if (s == flag_state::malformed) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true, std::memory_order_relaxed)) {
      std::string v;
      try {
        v = printable(*env_text(env_trace));
      } catch (...) {
      }
      std::fprintf(stderr, "roster: %s='%.*s' is not %.*s, so tracing is off\nFix: set %s to %.*s, or unset it\n",
                   env_trace, static_cast<int>(v.size()), v.data(), static_cast<int>(flag_words.size()),
                   flag_words.data(), env_trace, static_cast<int>(flag_words.size()), flag_words.data());
    }
  }
  return s == flag_state::on;
}

/// Prints one trace line, "roster: LINE", to stderr while ROSTER_TRACE is on.
/// A line is one line: a control byte in it (a newline from outside text
/// that reached a message) is printed escaped, so it cannot start a line of
/// its own ("Fix: ...").
inline void trace(std::string_view line) noexcept {
  if (!trace_on()) return;
  try {
    const std::string shown = printable(line, line.size());
    std::fprintf(stderr, "roster: %s\n", shown.c_str());
  } catch (...) {
    std::fprintf(stderr, "roster: (a trace line, not printed: out of memory)\n");
  }
}

}  // namespace roster::detail
