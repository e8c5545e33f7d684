#pragma once
// Private: the tuning file (a small JSON reader and writer, the locked atomic
// replace) and the ranking that uses its records.

#include <roster/tuning.hpp>
#include <roster/detail/env.hpp>
#include <roster/detail/text.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace roster {

namespace detail {

// The tuning file is JSON, read without a JSON library so the core keeps no
// dependency: this reader takes any JSON text (RFC 8259) up to a nesting
// depth of 32 and rejects everything else, including trailing bytes.
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

class json_reader {
 public:
  explicit json_reader(std::string_view text) : t_(text) {}
  // Parses the whole text; on failure returns false and sets where().
  bool parse(json_value& out) {
    skip();
    if (!value(out, 0)) return false;
    skip();
    if (p_ != t_.size()) return fail("unexpected bytes after the end of the JSON value");
    return true;
  }
  std::size_t where() const noexcept { return p_; }
  const std::string& why() const noexcept { return why_; }

 private:
  bool fail(const char* why) {
    if (why_.empty()) why_ = why;
    return false;
  }
  void skip() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool literal(std::string_view w) {
    if (t_.substr(p_, w.size()) != w) return fail("unknown literal");
    p_ += w.size();
    return true;
  }
  bool value(json_value& v, int depth) {
    if (depth > 32) return fail("nesting deeper than 32");
    if (p_ >= t_.size()) return fail("the file ends in the middle of a value (truncated?)");
    const char c = t_[p_];
    if (c == '{') return object(v, depth);
    if (c == '[') return array(v, depth);
    if (c == '"') {
      v.k = json_value::kind::string;
      return string(v.s);
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
  static void utf8(std::string& out, unsigned u) {
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
  bool string(std::string& out) {
    ++p_;  // the opening quote
    while (true) {
      if (p_ >= t_.size()) return fail("the file ends inside a string (truncated?)");
      const char c = t_[p_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return fail("a control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= t_.size()) return fail("the file ends inside a string (truncated?)");
      const char e = t_[p_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned u = 0;
          if (!hex4(u)) return false;
          if (u >= 0xd800 && u < 0xdc00) {
            unsigned lo = 0;
            if (t_.substr(p_, 2) != "\\u") return fail("a lone UTF-16 surrogate");
            p_ += 2;
            if (!hex4(lo) || lo < 0xdc00 || lo >= 0xe000) return fail("a lone UTF-16 surrogate");
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
          }
          utf8(out, u);
          break;
        }
        default: return fail("an unknown escape inside a string");
      }
    }
  }
  bool array(json_value& v, int depth) {
    v.k = json_value::kind::array;
    ++p_;
    skip();
    if (p_ < t_.size() && t_[p_] == ']') return ++p_, true;
    while (true) {
      v.items.emplace_back();
      skip();
      if (!value(v.items.back(), depth + 1)) return false;
      skip();
      if (p_ >= t_.size()) return fail("the file ends inside an array (truncated?)");
      if (t_[p_] == ']') return ++p_, true;
      if (t_[p_] != ',') return fail("expected ',' or ']' in an array");
      ++p_;
    }
  }
  bool object(json_value& v, int depth) {
    v.k = json_value::kind::object;
    ++p_;
    skip();
    if (p_ < t_.size() && t_[p_] == '}') return ++p_, true;
    while (true) {
      skip();
      if (p_ >= t_.size()) return fail("the file ends inside an object (truncated?)");
      if (t_[p_] != '"') return fail("expected a quoted key in an object");
      v.keys.emplace_back();
      if (!string(v.keys.back())) return false;
      skip();
      if (p_ >= t_.size() || t_[p_] != ':') return fail("expected ':' after a key");
      ++p_;
      skip();
      v.items.emplace_back();
      if (!value(v.items.back(), depth + 1)) return false;
      skip();
      if (p_ >= t_.size()) return fail("the file ends inside an object (truncated?)");
      if (t_[p_] == '}') return ++p_, true;
      if (t_[p_] != ',') return fail("expected ',' or '}' in an object");
      ++p_;
    }
  }

  std::string_view t_;
  std::size_t p_ = 0;
  std::string why_;
};

inline void json_quote(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
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

inline void json_number(std::string& out, double x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest text that reads back as x
  out.append(buf, r.ptr);
}

inline constexpr std::string_view tuning_format = "roster-tuning";
inline constexpr int tuning_version = 1;
inline constexpr op tuning_ops[] = {op::copy, op::mul, op::add, op::triad, op::dot};

inline void tuning_trace(const std::string& line) { trace("tuning: " + line); }

inline unexpected corrupt_tuning(std::string_view why) {
  return make_error(errc::io, "tuning file: " + std::string(why) + "; its records are ignored",
                    "delete the file (roster keeps working without it) and run 'roster-info bench' to measure again");
}

}  // namespace detail

ROSTER_INLINE std::string tuning_device_key(const adapter_info& a) {
  if (a.has_uuid()) return a.uuid_string();
  return a.spec() + "/" + a.name;
}

ROSTER_INLINE expected<std::string> tuning_path() {
  const auto xdg = detail::env_text("XDG_CACHE_HOME");
  if (xdg && xdg->starts_with('/')) return std::string(*xdg) + "/roster/tuning.json";
  const auto home = detail::env_text("HOME");
  if (home && !home->empty()) return std::string(*home) + "/.cache/roster/tuning.json";
  return make_error(errc::not_found, "tuning file: neither XDG_CACHE_HOME nor HOME is set",
                    "set XDG_CACHE_HOME (or HOME) to a folder roster may write to");
}

ROSTER_INLINE std::string to_json(const tuning_file& file) {
  using detail::json_number;
  using detail::json_quote;
  std::string out;
  out += "{\n  \"format\": ";
  json_quote(out, detail::tuning_format);
  out += ",\n  \"version\": " + std::to_string(detail::tuning_version) + ",\n  \"records\": [";
  bool first = true;
  for (const auto& r : file.records) {
    out += first ? "\n    {" : ",\n    {";
    first = false;
    out += "\"backend\": ";
    json_quote(out, r.backend);
    out += ", \"device\": ";
    json_quote(out, r.device);
    out += ", \"driver\": ";
    json_quote(out, r.driver_version);
    out += ",\n     \"spec\": ";
    json_quote(out, r.spec);
    out += ", \"name\": ";
    json_quote(out, r.name);
    out += ", \"measured_at\": ";
    json_quote(out, r.measured_at);
    out += ", \"elements\": " + std::to_string(r.elements) + ", \"reps\": " + std::to_string(r.reps);
    out += ",\n     \"gbps\": {";
    bool first_type = true;
    for (element_type t : {element_type::f32, element_type::f64}) {
      std::string ops;
      for (const auto& f : r.figures) {
        if (f.type != t) continue;
        ops += ops.empty() ? "" : ", ";
        json_quote(ops, to_string(f.op));
        ops += ": ";
        json_number(ops, f.gbps);
      }
      if (ops.empty()) continue;
      out += first_type ? "" : ", ";
      first_type = false;
      json_quote(out, to_string(t));
      out += ": {" + ops + "}";
    }
    out += "}";
    if (r.native_sync_ns || r.split_sync_ns) {
      out += ",\n     \"grid_sync\": {";
      bool any = false;
      if (r.native_sync_ns) {
        out += "\"native_ns\": ";
        json_number(out, *r.native_sync_ns);
        any = true;
      }
      if (r.split_sync_ns) {
        out += any ? ", " : "";
        out += "\"split_ns\": ";
        json_number(out, *r.split_sync_ns);
      }
      out += "}";
    }
    out += "}";
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

ROSTER_INLINE expected<tuning_file> parse_tuning(std::string_view text) {
  using detail::json_value;
  using kind = json_value::kind;
  json_value root;
  detail::json_reader reader(text);
  if (!reader.parse(root))
    return detail::corrupt_tuning("not valid JSON at byte " + std::to_string(reader.where()) + " (" + reader.why() +
                                  ")");
  if (root.k != kind::object) return detail::corrupt_tuning("the top level is not an object");
  const json_value* format = root.get("format");
  if (format == nullptr || format->k != kind::string || format->s != detail::tuning_format)
    return detail::corrupt_tuning("\"format\" is not \"roster-tuning\"");
  const json_value* version = root.get("version");
  if (version == nullptr || version->k != kind::number || version->n != detail::tuning_version)
    return detail::corrupt_tuning("\"version\" is not " + std::to_string(detail::tuning_version));
  const json_value* records = root.get("records");
  if (records == nullptr || records->k != kind::array) return detail::corrupt_tuning("\"records\" is not an array");
  tuning_file out;
  std::size_t index = 0;
  for (const auto& r : records->items) {
    const std::string where = "record " + std::to_string(index++);
    if (r.k != kind::object) return detail::corrupt_tuning(where + " is not an object");
    tuning_record rec;
    auto text_field = [&](const char* key, std::string& to, bool required) -> bool {
      const json_value* v = r.get(key);
      if (v == nullptr) return !required;
      if (v->k != kind::string) return false;
      to = v->s;
      return true;
    };
    auto count_field = [&](const char* key, auto& to) -> bool {
      const json_value* v = r.get(key);
      if (v == nullptr) return true;
      using count_t = std::remove_reference_t<decltype(to)>;
      // Beyond the field's range the cast would be undefined (reps is 32 bits).
      if (v->k != kind::number || v->n < 0 || v->n != std::floor(v->n) || v->n > 1e18 ||
          v->n > static_cast<double>(std::numeric_limits<count_t>::max()))
        return false;
      to = static_cast<count_t>(v->n);
      return true;
    };
    if (!text_field("backend", rec.backend, true) || rec.backend.empty())
      return detail::corrupt_tuning(where + ": \"backend\" is missing or not a string");
    if (!text_field("device", rec.device, true) || rec.device.empty())
      return detail::corrupt_tuning(where + ": \"device\" is missing or not a string");
    if (!text_field("driver", rec.driver_version, true))
      return detail::corrupt_tuning(where + ": \"driver\" is missing or not a string");
    if (!text_field("spec", rec.spec, false) || !text_field("name", rec.name, false) ||
        !text_field("measured_at", rec.measured_at, false))
      return detail::corrupt_tuning(where + ": \"spec\", \"name\" or \"measured_at\" is not a string");
    if (!count_field("elements", rec.elements) || !count_field("reps", rec.reps))
      return detail::corrupt_tuning(where + ": \"elements\" or \"reps\" is not a whole number");
    const json_value* gbps = r.get("gbps");
    if (gbps == nullptr || gbps->k != kind::object)
      return detail::corrupt_tuning(where + ": \"gbps\" is missing or not an object");
    for (std::size_t t = 0; t < gbps->keys.size(); ++t) {
      element_type type;
      if (gbps->keys[t] == "float") type = element_type::f32;
      else if (gbps->keys[t] == "double") type = element_type::f64;
      else return detail::corrupt_tuning(where + ": unknown element type \"" + gbps->keys[t] + "\"");
      const json_value& ops = gbps->items[t];
      if (ops.k != kind::object) return detail::corrupt_tuning(where + ": \"gbps\"." + gbps->keys[t] + " is not an object");
      for (std::size_t o = 0; o < ops.keys.size(); ++o) {
        const op* found = nullptr;
        for (const op& known : detail::tuning_ops)
          if (to_string(known) == ops.keys[o]) found = &known;
        if (found == nullptr) return detail::corrupt_tuning(where + ": unknown op \"" + ops.keys[o] + "\"");
        if (ops.items[o].k != kind::number || !(ops.items[o].n >= 0))
          return detail::corrupt_tuning(where + ": the GB/s of " + ops.keys[o] + " is not a non-negative number");
        rec.figures.push_back({*found, type, ops.items[o].n});
      }
    }
    if (const json_value* sync = r.get("grid_sync")) {
      if (sync->k != kind::object) return detail::corrupt_tuning(where + ": \"grid_sync\" is not an object");
      for (const char* key : {"native_ns", "split_ns"}) {
        const json_value* v = sync->get(key);
        if (v == nullptr) continue;
        if (v->k != kind::number || !(v->n > 0))
          return detail::corrupt_tuning(where + ": \"grid_sync\"." + key + " is not a positive number");
        (std::strcmp(key, "native_ns") == 0 ? rec.native_sync_ns : rec.split_sync_ns) = v->n;
      }
    }
    out.records.push_back(std::move(rec));
  }
  return out;
}

namespace detail {

inline expected<std::string> read_whole(const std::string& path, bool& missing) {
  missing = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      missing = true;
      return std::string();
    }
    return make_error(errc::io, "tuning file " + path + ": cannot open: " + std::strerror(errno),
                      "make the file readable, or delete it and run 'roster-info bench'");
  }
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return make_error(errc::io, "tuning file " + path + ": cannot read: " + std::strerror(e),
                        "make the file readable, or delete it and run 'roster-info bench'");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > (64u << 20)) {
      ::close(fd);
      return corrupt_tuning("larger than 64 MiB");
    }
  }
  ::close(fd);
  return text;
}

inline expected<void> make_folders(const std::string& dir) {
  std::string part;
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      part = dir.substr(0, i);
      if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
        return make_error(errc::io, "tuning file: cannot create the folder " + part + ": " + std::strerror(errno),
                          "create it yourself, or point XDG_CACHE_HOME at a writable folder");
    }
  }
  return {};
}

inline bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Holds an exclusive flock on PATH.lock: the lock file is never renamed or
// deleted, so every writer locks the same inode (locking the data file itself
// would not work, since rename replaces it).
class tuning_lock {
 public:
  explicit tuning_lock(const std::string& path) {
    fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
    }
  }
  ~tuning_lock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  tuning_lock(const tuning_lock&) = delete;
  tuning_lock& operator=(const tuning_lock&) = delete;
  bool held() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace detail

ROSTER_INLINE expected<tuning_file> load_tuning(const std::string& path) {
  bool missing = false;
  auto text = detail::read_whole(path, missing);
  if (!text) return std::move(text).error();
  if (missing) return tuning_file{};
  auto file = parse_tuning(*text);
  if (!file) return std::move(file).error().prepend(path);
  return file;
}

ROSTER_INLINE expected<void> save_tuning(const std::string& path, std::span<const tuning_record> records) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash);
  if (slash != std::string::npos && slash > 0)
    if (auto ok = detail::make_folders(dir); !ok) return ok;
  detail::tuning_lock lock(path);
  if (!lock.held())
    return make_error(errc::io, "tuning file " + path + ".lock: cannot lock: " + std::strerror(errno),
                      "make the folder writable, or point XDG_CACHE_HOME at a writable folder");
  // Read-merge-write under the lock; a corrupt old file is replaced.
  tuning_file merged;
  if (auto old = load_tuning(path)) merged = std::move(*old);
  for (const auto& r : records) {
    auto same = std::find_if(merged.records.begin(), merged.records.end(), [&](const tuning_record& x) {
      return x.backend == r.backend && x.device == r.device;
    });
    if (same != merged.records.end()) *same = r;
    else merged.records.push_back(r);
  }
  const std::string text = to_json(merged);
  std::string temp = path + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return make_error(errc::io, "tuning file: cannot create a temporary file beside " + path + ": " +
                                    std::strerror(errno),
                      "make the folder writable, or point XDG_CACHE_HOME at a writable folder");
  ::fchmod(fd, 0644);
  const bool written = detail::write_all(fd, text) && ::fsync(fd) == 0;
  const int write_errno = errno;
  ::close(fd);
  if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = written ? errno : write_errno;
    ::unlink(temp.c_str());
    return make_error(errc::io, "tuning file " + path + ": cannot write: " + std::strerror(e),
                      "free some disk space or make the folder writable, then run 'roster-info bench' again");
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

ROSTER_INLINE tuning_match find_tuning(std::span<const tuning_record> records, const adapter_info& a) noexcept {
  tuning_match m;
  try {
    const std::string key = tuning_device_key(a);
    for (const auto& r : records) {
      if (r.backend != a.backend || r.device != key) continue;
      if (r.driver_version == a.driver_version) m.record = &r;
      else m.stale = &r;
    }
  } catch (...) {
  }
  return m;
}

namespace detail {
ROSTER_INLINE tuning_match find_tuning_traced(std::span<const tuning_record> records, const adapter_info& a) {
  auto m = find_tuning(records, a);
  if (m.record == nullptr && m.stale != nullptr)
    tuning_trace(a.spec() + ": record ignored: measured under driver '" + m.stale->driver_version + "', now '" +
                 a.driver_version + "'");
  return m;
}

struct tuning_cache {
  std::mutex mutex;
  bool loaded = false;
  tuning_file file;
};
inline tuning_cache& the_tuning_cache() {
  static tuning_cache cache;  // function-local: no global constructor
  return cache;
}
}  // namespace detail

ROSTER_INLINE std::span<const tuning_record> current_tuning() {
  auto& cache = detail::the_tuning_cache();
  std::lock_guard lock(cache.mutex);
  if (!cache.loaded) {
    cache.loaded = true;
    if (auto path = tuning_path()) {
      if (auto file = load_tuning(*path)) cache.file = std::move(*file);
      else detail::tuning_trace("warning: " + file.error().message());
    }
  }
  // Records are replaced only by reload_tuning, which callers sequence themselves.
  return cache.file.records;
}

ROSTER_INLINE void reload_tuning() {
  auto& cache = detail::the_tuning_cache();
  std::lock_guard lock(cache.mutex);
  cache.loaded = false;
  cache.file = {};
}

ROSTER_INLINE std::optional<double> triad_bandwidth(const adapter_info& a) {
  auto m = find_tuning(current_tuning(), a);
  if (m.record == nullptr) return std::nullopt;
  return m.record->triad_bandwidth();
}

ROSTER_INLINE bool prefer_split_for(const adapter_info& a) {
  if (!a.native_grid_sync) return false;
  auto m = detail::find_tuning_traced(current_tuning(), a);
  if (m.record == nullptr) return false;
  auto split = m.record->split_faster();
  if (!split) return false;
  detail::tuning_trace(a.spec() + ": " + (*split ? "grid-sync split" : "native grid sync") +
                       " for programs with dot, by record (native " +
                       detail::fixed(*m.record->native_sync_ns / 1e3) + " us, split " +
                       detail::fixed(*m.record->split_sync_ns / 1e3) + " us)");
  return *split;
}

ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters, std::span<const tuning_record> records) {
  bool changed = false;
  for (device_type type : {device_type::discrete_gpu, device_type::integrated_gpu, device_type::virtual_gpu,
                           device_type::other, device_type::cpu}) {
    std::vector<std::size_t> at;
    std::vector<std::pair<adapter_info, std::optional<double>>> items;
    for (std::size_t i = 0; i < adapters.size(); ++i) {
      if (adapters[i].type != type) continue;
      at.push_back(i);
      auto m = detail::find_tuning_traced(records, adapters[i]);
      items.emplace_back(adapters[i], m.record ? m.record->triad_bandwidth() : std::nullopt);
    }
    if (items.size() < 2) continue;
    std::vector<std::size_t> order(items.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      const auto& a = items[x].second;
      const auto& b = items[y].second;
      if (a && b) return *a > *b;
      return a.has_value() && !b.has_value();
    });
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (order[k] == k) continue;
      changed = true;
      // Say why an adapter moved ahead of the one that held its place.
      const auto& moved = items[order[k]];
      const auto& passed = items[k];
      if (moved.second && order[k] > k)
        detail::tuning_trace(moved.first.spec() + " ranks before " + passed.first.spec() + " by record: triad " +
                             detail::fixed(*moved.second) + " GB/s against " +
                             (passed.second ? detail::fixed(*passed.second) + " GB/s" : std::string("no record")));
    }
    for (std::size_t k = 0; k < order.size(); ++k) adapters[at[k]] = std::move(items[order[k]].first);
  }
  return changed;
}

ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters) {
  return order_by_tuning(adapters, current_tuning());
}

}  // namespace roster
