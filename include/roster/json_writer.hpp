#pragma once
/// JSON text from roster's data: every string valid UTF-8 whatever bytes it
/// held, every number finite or null. roster writes its tuning files, the job
/// check and roster-info's report with it, and a code that prints roster's
/// figures as JSON can too. Dependency-free on purpose (see
/// detail/base/json.hpp for the reader beside it).

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace roster {

namespace detail {

// Returns the length of the valid UTF-8 sequence at s[i], or 0 when the byte
// there starts none (a stray continuation, an overlong form, a surrogate, past
// U+10FFFF, or cut short).
inline std::size_t utf8_length(std::string_view s, std::size_t i) noexcept {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  std::size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && b(i + 1) < 0xa0) || (c == 0xed && b(i + 1) > 0x9f))) return 0;
  if (n == 4 && ((c == 0xf0 && b(i + 1) < 0x90) || (c == 0xf4 && b(i + 1) > 0x8f))) return 0;
  return n;
}

}  // namespace detail

/// How json_quote writes a byte that is not part of valid UTF-8.
enum class json_bytes : std::uint8_t {
  shown,  ///< as the text \xNN: valid JSON that any parser takes, for people (roster-info's report)
  kept,   ///< as \udcNN (PEP 383's surrogateescape), which json_reader reads back as the byte: for data
};

/// Appends s as a JSON string. Bytes that are not valid UTF-8 (a path or a
/// variable holding Latin-1, say) are written as `bytes` says, so the output
/// stays JSON and still shows (or keeps) what the bytes were.
inline void json_quote(std::string& out, std::string_view s, json_bytes bytes = json_bytes::shown) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      if (const std::size_t n = detail::utf8_length(s, i); n > 0) {
        out.append(s.substr(i, n));
        i += n - 1;
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, bytes == json_bytes::kept ? "\\udc%02x" : "\\\\x%02x",
                      static_cast<unsigned>(static_cast<unsigned char>(c)));
        out += buf;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

/// Appends x as the shortest JSON number that reads back as x.
inline void json_number(std::string& out, double x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest text that reads back as x
  out.append(buf, r.ptr);
}

/// Writes a JSON document of nested objects and arrays, indented by two
/// spaces a level, in the order the calls come (roster-info's report, the job check). Strings
/// go through json_quote (bytes that are not UTF-8 become the text \xNN),
/// integers are written as integers, a number that is not finite as null.
/// The caller pairs each begin with its end and gives each object member a
/// key first; text() is valid JSON once every container is closed.
class json_writer {
 public:
  json_writer& begin_object() { return open('{'); }
  json_writer& end_object() { return close('}'); }
  json_writer& begin_array() { return open('['); }
  json_writer& end_array() { return close(']'); }
  /// Starts an object member: its value is the next call.
  json_writer& key(std::string_view k) {
    next();
    json_quote(out_, k);
    out_ += ": ";
    keyed_ = true;
    return *this;
  }
  json_writer& value(std::string_view s) { return next(), json_quote(out_, s), *this; }
  json_writer& value(const char* s) { return value(std::string_view(s)); }
  json_writer& value(bool b) { return next(), out_ += b ? "true" : "false", *this; }
  json_writer& value(double x) {
    next();
    if (std::isfinite(x)) json_number(out_, x);
    else out_ += "null";
    return *this;
  }
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  json_writer& value(T x) {
    next();
    char buf[24];
    out_.append(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
    return *this;
  }
  json_writer& null() { return next(), out_ += "null", *this; }
  /// Writes a member in one call: key(k), then value(v).
  template <class T>
  json_writer& member(std::string_view k, const T& v) {
    return key(k).value(v);
  }
  const std::string& text() const noexcept { return out_; }

 private:
  // Before a value or a key: the comma after the previous element, and the
  // new line with its indent; nothing after a key.
  void next() {
    if (keyed_) {
      keyed_ = false;
      return;
    }
    if (open_.empty()) return;
    if (!open_.back()) out_ += ',';
    open_.back() = false;
    out_ += '\n';
    out_.append(2 * open_.size(), ' ');
  }
  json_writer& open(char c) {
    next();
    out_ += c;
    open_.push_back(true);
    return *this;
  }
  json_writer& close(char c) {
    const bool empty = open_.back();
    open_.pop_back();
    if (!empty) {
      out_ += '\n';
      out_.append(2 * open_.size(), ' ');
    }
    out_ += c;
    return *this;
  }

  std::string out_;
  std::vector<bool> open_;  // per open container: no element written yet
  bool keyed_ = false;
};

}  // namespace roster
