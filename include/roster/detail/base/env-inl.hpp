#pragma once
// Private: the environment's parsers.

#include <roster/env.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>

#include <string>

#include <sys/stat.h>

namespace roster::env {

namespace detail_env {
inline error malformed(const char* name, std::string_view value, std::string_view expected_words) {
  return error(errc::invalid_argument,
               std::string(name) + "='" + roster::detail::printable(value) + "' is not " + std::string(expected_words),
               "set " + std::string(name) + " to " + std::string(expected_words) + ", or unset it");
}
}  // namespace detail_env

ROSTER_INLINE std::optional<std::string_view> text(const char* name) noexcept { return detail::env_text(name); }

ROSTER_INLINE std::optional<bool> parse_flag(std::string_view value) noexcept { return detail::flag_word(value); }

ROSTER_INLINE expected<std::optional<bool>> flag(const char* name) {
  const auto value = text(name);
  if (!value || detail::trim(*value).empty()) return std::optional<bool>{};
  if (auto b = parse_flag(*value)) return std::optional<bool>(*b);
  return detail_env::malformed(name, *value, detail::flag_words);
}

ROSTER_INLINE expected<std::optional<std::uint64_t>> whole_number(const char* name, std::uint64_t min,
                                                                 std::uint64_t max) {
  const auto value = text(name);
  if (!value || detail::trim(*value).empty()) return std::optional<std::uint64_t>{};
  const auto n = detail::parse_uint(detail::trim(*value), max);
  if (!n || *n < min)
    return detail_env::malformed(name, *value,
                                 "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  return std::optional<std::uint64_t>(*n);
}

ROSTER_INLINE expected<std::optional<std::size_t>> choice(const char* name,
                                                         std::initializer_list<std::string_view> choices) {
  const auto value = text(name);
  if (!value || detail::trim(*value).empty()) return std::optional<std::size_t>{};
  std::size_t i = 0;
  std::string words;
  for (std::string_view c : choices) {
    if (detail::iequal(detail::trim(*value), c)) return std::optional<std::size_t>(i);
    words += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(c);
    ++i;
  }
  return detail_env::malformed(name, *value, "one of " + words);
}

ROSTER_INLINE expected<std::optional<std::string>> library(const char* name, std::string_view fix) {
  const auto value = text(name);
  if (!value || detail::trim(*value).empty()) return std::optional<std::string>{};
  const std::string path(*value);
  auto refuse = [&](std::string_view why) {
    return make_error(errc::invalid_argument,
                      std::string(name) + "='" + roster::detail::printable(path) + "' " + std::string(why), fix);
  };
  if (path.find('/') == std::string::npos) {
    // A plain name: the dynamic linker searches its folders for it.
    if (path == "." || path == ".." || path.find_first_of(" \t\n") != std::string::npos)
      return refuse("is not a library name");
    return std::optional<std::string>(path);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return std::optional<std::string>(path);
  const char* kind = S_ISDIR(st.st_mode)                         ? "a folder"
                     : S_ISFIFO(st.st_mode)                      ? "a FIFO"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISSOCK(st.st_mode)                      ? "a socket"
                                                                 : "not a regular file";
  return refuse("is " + std::string(kind) + ", not a library file");
}

ROSTER_INLINE std::string printable(std::string_view text, std::size_t limit) {
  return detail::printable(text, limit);
}

}  // namespace roster::env
