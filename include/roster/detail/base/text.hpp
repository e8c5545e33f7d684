#pragma once
// Private: the text helpers every layer shares (trim, ASCII case folding,
// whole-number parsing). ASCII only and locale-free on purpose: a spec, a
// selector or an environment value must read the same under any locale.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace roster::detail {

/// Returns whether c is ASCII white space (the C locale's isspace set).
constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// Returns s without leading and trailing ASCII white space.
constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

/// Returns c in lower case when it is an ASCII capital letter.
constexpr char to_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// Returns s in lower case (ASCII letters only).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = to_lower(c);
  return out;
}

/// Returns whether a and b are equal ignoring ASCII case.
constexpr bool iequal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  return true;
}

/// Returns whether c is an ASCII decimal digit.
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
/// Returns whether c is an ASCII hex digit.
constexpr bool is_hex(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
/// Returns whether c may appear in a backend's type name: a letter, a digit, '_' or '-'.
constexpr bool is_name_char(char c) noexcept {
  const char l = to_lower(c);
  return (l >= 'a' && l <= 'z') || is_digit(c) || c == '_' || c == '-';
}

/// Parses s as a whole number of decimal digits only (no sign, no spaces, not
/// empty) no larger than max; returns nullopt otherwise. Never overflows.
constexpr std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max) noexcept {
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return std::nullopt;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (max - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

/// Returns x written with `decimals` digits after the point, e.g. "12.5".
inline std::string fixed(double x, int decimals = 1) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
  return buf;
}

/// Returns text from outside roster (environment, files, drivers, plugins,
/// the command line) fit to print on one line: control bytes and bytes that
/// are not UTF-8 as \n, \t, \xNN (C's escapes, as systemd's cescape writes
/// them), a backslash doubled; past `limit` bytes cut, with the size said.
inline std::string printable(std::string_view s, std::size_t limit = 256) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  const std::string_view shown = s.substr(0, limit);
  for (std::size_t i = 0; i < shown.size();) {
    const auto c = static_cast<unsigned char>(shown[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    for (std::size_t k = 1; k < len; ++k)
      if (i + k >= shown.size() || (static_cast<unsigned char>(shown[i + k]) & 0xc0) != 0x80) len = 0;
    if (len > 1) {
      out.append(shown.substr(i, len));
      i += len;
      continue;
    }
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
    ++i;
  }
  if (s.size() > limit) out += "... (" + std::to_string(s.size()) + " bytes in all)";
  return out;
}

}  // namespace roster::detail
