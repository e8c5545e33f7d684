#pragma once
// Private: a small JSON reader, for the tuning file; the writer is public
// (roster/json_writer.hpp).
//
// Dependency-free on purpose, not nlohmann-json: the core is headers plus one
// library with no dependency, and a header-only user or an installed package
// would otherwise need nlohmann-json on its include path (and its 25,000
// lines in every unit that includes roster header-only) for one small file.
// The reader is short, RFC 8259 complete, depth bounded, and fuzzed
// (fuzz/tuning.cpp).

#include <roster/json_writer.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace roster::detail {

using roster::json_bytes;
using roster::json_number;
using roster::json_quote;
using roster::json_writer;

// This reader takes any JSON text (RFC 8259) up to a nesting depth of 32 and
// rejects everything else, including trailing bytes and an object that holds
// one key twice (in the values it builds; a value it skips is not searched).
struct json_value {
  enum class kind : std::uint8_t { null, boolean, number, string, array, object };
  kind k = kind::null;
  bool b = false;
  double n = 0.0;
  std::string s;
  std::vector<json_value> items;   // array elements, or object values
  std::vector<std::string> keys;   // object keys, parallel to items

  const json_value* get(std::string_view key) const noexcept {
    if (k != kind::object) return nullptr;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &items[i];
    return nullptr;
  }
};

// The reader builds a tree (parse), or walks a document the caller steps
// through (next_member, next_element) building only the values it asks for
// (value) and skipping the rest without building them (skip_value): the
// tuning file's reader keeps memory to the records it keeps, whatever junk
// the text holds. A value built past the budget (limit) is skipped instead,
// and over_budget() says so.
class json_reader {
 public:
  explicit json_reader(std::string_view text) : t_(text) {}
  // Parses the whole text; on failure returns false and sets where().
  bool parse(json_value& out) {
    skip();
    if (!value(out, 0)) return false;
    return finish();
  }
  std::size_t where() const noexcept { return p_; }
  const std::string& why() const noexcept { return why_; }
  bool failed() const noexcept { return !why_.empty(); }

  /// Returns the next byte past white space ('\0' at the end).
  char peek() {
    skip();
    return p_ < t_.size() ? t_[p_] : '\0';
  }
  /// Checks that only white space follows.
  bool finish() {
    skip();
    if (p_ != t_.size()) return fail("unexpected bytes after the end of the JSON value");
    return true;
  }
  /// Steps into an object: consumes its '{' (false when the next value is not one).
  bool enter_object() { return peek() == '{' ? (++p_, true) : fail("expected an object"); }
  /// Steps into an array: consumes its '[' (false when the next value is not one).
  bool enter_array() { return peek() == '[' ? (++p_, true) : fail("expected an array"); }
  /// Steps to an object's next member: true with its key read (at most
  /// max_key bytes of it), false at the closing '}' or on an error (failed()).
  /// `first` starts true for each object.
  bool next_member(bool& first, std::string& key) {
    key.clear();
    if (!separator(first, '}')) return false;
    if (p_ >= t_.size() || t_[p_] != '"') return fail("expected a quoted key in an object");
    const std::size_t start = p_;
    key_at_ = start;
    if (!string(nullptr)) return false;
    if (p_ - start <= max_key) {  // short: read it again, kept (a longer one matches no key of ours)
      p_ = start;
      if (!string(&key, false)) return false;
    }
    return colon();
  }
  /// Steps to an array's next element: true when one follows, false at the
  /// closing ']' or on an error (failed()).
  bool next_element(bool& first) { return separator(first, ']'); }
  /// Where the key next_member read last starts.
  std::size_t key_at() const noexcept { return key_at_; }
  /// Fails the read: `key` appears twice in one object, the second time at
  /// byte `at` (where() says so). A document with a duplicate key is not
  /// valid here: which of the two counts is not defined (RFC 8259 4), and
  /// taking one silently loses the other.
  bool duplicate_key(std::string_view key, std::size_t at) {
    if (!why_.empty()) return false;
    p_ = at;
    why_ = "the key \"" + std::string(key.substr(0, 64)) + "\" appears twice in one object";
    return false;
  }
  /// Validates the next value and steps past it, building nothing.
  bool skip_value(int depth) {
    if (depth > 32) return fail("nesting deeper than 32");
    const char c = peek();
    if (c == '"') return string(nullptr);
    if (c != '{' && c != '[') {
      json_value scalar;  // a number or a literal: nothing to allocate
      return any(scalar, depth);
    }
    ++p_;
    bool first = true;
    std::string key;
    if (c == '{') {
      while (next_member(first, key))
        if (!skip_value(depth + 1)) return false;
    } else {
      while (next_element(first))
        if (!skip_value(depth + 1)) return false;
    }
    return !failed();
  }
  /// Parses the next value into v (see limit).
  bool value(json_value& v, int depth) {
    skip();
    if (budget_ < sizeof(json_value)) {
      over_ = true;
      return skip_value(depth);
    }
    budget_ -= sizeof(json_value);
    return any(v, depth);
  }
  /// Sets how many bytes the values built from now on may take (about: a
  /// node's size plus its text); past it they are skipped, and over_budget().
  void limit(std::size_t bytes) noexcept {
    budget_ = bytes;
    over_ = false;
  }
  bool over_budget() const noexcept { return over_; }

  static constexpr std::size_t max_key = 256;

 private:
  // True while a value fits in the budget; past it, over_budget() from then on
  // (so no element or member is added empty).
  bool room() noexcept {
    if (budget_ < sizeof(json_value)) over_ = true;
    return !over_;
  }
  bool fail(const char* why) {
    if (why_.empty()) why_ = why;
    return false;
  }
  bool colon() {
    skip();
    if (p_ >= t_.size() || t_[p_] != ':') return fail("expected ':' after a key");
    ++p_;
    return true;
  }
  // Before an element or member: nothing for the first, else ','; false at
  // the closing byte (consumed) or on an error.
  bool separator(bool& first, char close) {
    skip();
    if (p_ >= t_.size()) return fail(close == '}' ? "the file ends inside an object (truncated?)"
                                                  : "the file ends inside an array (truncated?)");
    if (t_[p_] == close) return ++p_, false;
    if (!first) {
      if (t_[p_] != ',') return fail(close == '}' ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array");
      ++p_;
      skip();
    }
    first = false;
    return true;
  }
  void skip() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool literal(std::string_view w) {
    if (t_.substr(p_, w.size()) != w) return fail("unknown literal");
    p_ += w.size();
    return true;
  }
  bool any(json_value& v, int depth) {
    if (depth > 32) return fail("nesting deeper than 32");
    if (p_ >= t_.size()) return fail("the file ends in the middle of a value (truncated?)");
    const char c = t_[p_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.k = json_value::kind::string;
      return string(&v.s);
    }
    if (c == 't') { v.k = json_value::kind::boolean; v.b = true; return literal("true"); }
    if (c == 'f') { v.k = json_value::kind::boolean; v.b = false; return literal("false"); }
    if (c == 'n') { v.k = json_value::kind::null; return literal("null"); }
    return number(v);
  }
  bool number(json_value& v) {
    const std::size_t b = p_;
    if (p_ < t_.size() && t_[p_] == '-') ++p_;
    auto digits = [&] {
      std::size_t d = p_;
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
      return p_ > d;
    };
    if (!digits()) return fail("expected a value");
    if (p_ < t_.size() && t_[p_] == '.' && (++p_, !digits())) return fail("a number has no digits after '.'");
    if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
      ++p_;
      if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
      if (!digits()) return fail("a number has no exponent digits");
    }
    // from_chars, not strtod: it ignores the locale (a "," decimal point would
    // misread every figure) and the grammar above is a subset of its own.
    v.k = json_value::kind::number;
    auto r = std::from_chars(t_.data() + b, t_.data() + p_, v.n);
    if (r.ec != std::errc() || r.ptr != t_.data() + p_ || !std::isfinite(v.n))
      return fail("a number is out of range");
    return true;
  }
  bool hex4(unsigned& u) {
    if (p_ + 4 > t_.size()) return fail("a \\u escape is cut short");
    u = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = t_[p_++];
      u <<= 4;
      if (h >= '0' && h <= '9') u |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') u |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') u |= static_cast<unsigned>(h - 'A' + 10);
      else return fail("a \\u escape holds a non-hex digit");
    }
    return true;
  }
  static void utf8(std::string* to, unsigned u) {
    if (to == nullptr) return;
    std::string& out = *to;
    if (u < 0x80) {
      out += static_cast<char>(u);
    } else if (u < 0x800) {
      out += static_cast<char>(0xc0 | (u >> 6));
      out += static_cast<char>(0x80 | (u & 0x3f));
    } else if (u < 0x10000) {
      out += static_cast<char>(0xe0 | (u >> 12));
      out += static_cast<char>(0x80 | ((u >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (u & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (u >> 18));
      out += static_cast<char>(0x80 | ((u >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((u >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (u & 0x3f));
    }
  }
  // Reads a string into *out, or only validates it when out is null. Past
  // the budget (when counted) the text is dropped and over_budget() set.
  bool string(std::string* out, bool counted = true) {
    ++p_;  // the opening quote
    while (true) {
      if (p_ >= t_.size()) return fail("the file ends inside a string (truncated?)");
      const char c = t_[p_++];
      if (c == '"') {
        if (out != nullptr && counted) budget_ -= std::min(budget_, out->size());
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character inside a string");
      if (out != nullptr && counted && out->size() > budget_) {
        over_ = true;
        std::string().swap(*out);
        out = nullptr;
      }
      if (c != '\\') {
        if (out != nullptr) *out += c;
        continue;
      }
      if (p_ >= t_.size()) return fail("the file ends inside a string (truncated?)");
      const char e = t_[p_++];
      char plain = 0;
      switch (e) {
        case '"': plain = '"'; break;
        case '\\': plain = '\\'; break;
        case '/': plain = '/'; break;
        case 'b': plain = '\b'; break;
        case 'f': plain = '\f'; break;
        case 'n': plain = '\n'; break;
        case 'r': plain = '\r'; break;
        case 't': plain = '\t'; break;
        case 'u': {
          unsigned u = 0;
          if (!hex4(u)) return false;
          if (u >= 0xd800 && u < 0xdc00) {
            unsigned lo = 0;
            if (t_.substr(p_, 2) != "\\u") return fail("a lone UTF-16 surrogate");
            p_ += 2;
            if (!hex4(lo) || lo < 0xdc00 || lo >= 0xe000) return fail("a lone UTF-16 surrogate");
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
          } else if (u >= 0xdc80 && u <= 0xdcff) {
            // A lone low surrogate U+DC80..U+DCFF is the byte 0x80..0xFF that
            // was not UTF-8 (json_quote with json_bytes::kept, PEP 383's
            // surrogateescape): the bytes come back as they were.
            if (out != nullptr) *out += static_cast<char>(u - 0xdc00);
            break;
          }
          utf8(out, u);
          break;
        }
        default: return fail("an unknown escape inside a string");
      }
      if (plain != 0 && out != nullptr) *out += plain;
    }
  }
  // Past the budget an element is skipped, not added: a long array of small
  // values costs nothing then.
  bool array(json_value& v, int depth) {
    v.k = json_value::kind::array;
    ++p_;
    bool first = true;
    while (next_element(first)) {
      if (!room()) {
        if (!skip_value(depth + 1)) return false;
        continue;
      }
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1)) return false;
    }
    return !failed();
  }
  // A key seen twice is an error (duplicate_key); checked once the object is
  // read, sorted, so an object of many keys costs n log n, not n squared.
  bool object(json_value& v, int depth) {
    v.k = json_value::kind::object;
    ++p_;
    bool first = true;
    std::vector<std::size_t> at;  // where each kept key starts
    while (separator(first, '}')) {
      if (p_ >= t_.size() || t_[p_] != '"') return fail("expected a quoted key in an object");
      if (!room()) {
        if (!string(nullptr) || !colon() || !skip_value(depth + 1)) return false;
        continue;
      }
      at.push_back(p_);
      v.keys.emplace_back();
      if (!string(&v.keys.back()) || !colon()) return false;
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1)) return false;
    }
    if (failed()) return false;
    if (v.keys.size() < 2) return true;
    std::vector<std::size_t> order(v.keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return v.keys[a] != v.keys[b] ? v.keys[a] < v.keys[b] : a < b;
    });
    // The first duplicate in the text: the earliest second occurrence.
    std::size_t dup = order.size();
    for (std::size_t i = 1; i < order.size(); ++i)
      if (v.keys[order[i]] == v.keys[order[i - 1]] && (dup == order.size() || order[i] < dup)) dup = order[i];
    return dup == order.size() || duplicate_key(v.keys[dup], at[dup]);
  }

  std::string_view t_;
  std::size_t p_ = 0;
  std::string why_;
  std::size_t key_at_ = 0;
  std::size_t budget_ = static_cast<std::size_t>(-1);
  bool over_ = false;
};

}  // namespace roster::detail
