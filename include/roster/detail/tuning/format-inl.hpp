#pragma once
// Private: tuning records to and from JSON.

#include <roster/tuning/format.hpp>
#include <roster/detail/base/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace roster {

namespace detail {

inline constexpr std::string_view tuning_format = "roster-tuning";
inline constexpr int tuning_version = 2;  // 2: grid-sync timings only per shape ("grid_sync" of 1 is read as "triad|dot")
inline constexpr op tuning_ops[] = {op::copy, op::mul, op::add, op::triad, op::dot};

// Quotes text of the tuning file: bytes that are not UTF-8 are kept (\udcNN),
// so a key of such bytes reads back the same and matches again.
inline void quote(std::string& out, std::string_view s) { json_quote(out, s, json_bytes::kept); }

inline unexpected corrupt_tuning(std::string_view why) {
  return make_error(errc::io, "tuning file: " + std::string(why) + "; its records are ignored",
                    "run 'roster-info bench': it keeps roster's own tuning file aside (FILE.corrupt-TIME), carries "
                    "over every record it can read and measures the rest; a ROSTER_TUNING_PATH site file is its "
                    "administrator's to rewrite (roster-info bench --export), and roster leaves it as it is");
}

// A file of a format version this roster does not know, written by a newer
// one: errc::unsupported, so that a save leaves it as it is (store-inl.hpp).
inline unexpected newer_tuning(double version) {
  std::string shown;
  json_number(shown, version);
  return make_error(errc::unsupported,
                    "tuning file: written by a newer roster (format version " + shown + "; this one reads 1 and " +
                        std::to_string(tuning_version) + "); its records are not read, and it is not replaced",
                    "upgrade roster to read it; or, to keep this roster's own records apart, point XDG_CACHE_HOME "
                    "at another folder (a site file: list another file in ROSTER_TUNING_PATH)");
}

// Writes `"KEY": {"float": {OP: VALUE, ...}, "double": {...}}` of each figure's value.
template <class Value>
void figures_object(std::string& out, std::string_view key, const tuning_record& r, Value value) {
  out += ",\n     ";
  quote(out, key);
  out += ": {";
  bool first_type = true;
  for (element_type t : {element_type::f32, element_type::f64}) {
    std::string ops;
    for (const auto& f : r.figures) {
      if (f.type != t) continue;
      ops += ops.empty() ? "" : ", ";
      quote(ops, to_string(f.op));
      ops += ": ";
      json_number(ops, value(f));
    }
    if (ops.empty()) continue;
    out += first_type ? "" : ", ";
    first_type = false;
    quote(out, to_string(t));
    out += ": {" + ops + "}";
  }
  out += "}";
}

inline void figures_to_json(std::string& out, const tuning_record& r) {
  figures_object(out, "gbps", r, [](const tuning_figure& f) { return f.gbps; });
  // The reps' spreads, when measured: the decision rule's noise (roster/noise_rule.hpp).
  if (std::any_of(r.figures.begin(), r.figures.end(), [](const tuning_figure& f) { return f.spread > 0; }))
    figures_object(out, "spread", r, [](const tuning_figure& f) { return f.spread; });
  if (std::any_of(r.figures.begin(), r.figures.end(), [](const tuning_figure& f) { return f.bound > 0; }))
    figures_object(out, "bound", r, [](const tuning_figure& f) { return f.bound; });
}

inline void shapes_to_json(std::string& out, const tuning_record& r) {
  if (r.sync_shapes.empty()) return;
  out += ",\n     \"grid_sync_shapes\": [";
  bool first = true;
  for (const auto& g : r.sync_shapes) {
    out += first ? "\n       {\"shape\": " : ",\n       {\"shape\": ";
    first = false;
    quote(out, g.shape);
    for (const auto& [key, value] :
         {std::pair{", \"native_ns\": ", g.native_ns}, {", \"split_ns\": ", g.split_ns}, {", \"spread\": ", g.spread}}) {
      out += key;
      json_number(out, value);
    }
    out += "}";
  }
  out += "]";
}

inline void kernels_to_json(std::string& out, const tuning_record& r) {
  if (r.kernels.empty()) return;
  out += ",\n     \"kernels\": [";
  bool first = true;
  for (const auto& k : r.kernels) {
    out += first ? "\n       {\"op\": " : ",\n       {\"op\": ";
    first = false;
    quote(out, k.op);
    out += ", \"type\": ";
    quote(out, to_string(k.type));
    out += ", \"size_class\": " + std::to_string(k.size_class) + ", \"variant\": ";
    quote(out, k.variant);
    out += ", \"baseline\": ";
    quote(out, k.baseline);
    for (const auto& [key, value] : {std::pair{", \"variant_ns\": ", k.variant_ns},
                                     {", \"baseline_ns\": ", k.baseline_ns}, {", \"spread\": ", k.spread}}) {
      out += key;
      json_number(out, value);
    }
    out += "}";
  }
  out += "]";
}

// Reads an optional string field of a JSON object; false when it is not a string.
inline bool text_field_of(const json_value& o, const char* key, std::string& to, bool required = false) {
  const json_value* v = o.get(key);
  if (v == nullptr) return !required;
  if (v->k != json_value::kind::string) return false;
  to = v->s;
  return true;
}

// Reads an optional whole-number field into `to`; false when it is not one or
// does not fit (reps is 32 bits).
template <class Count>
bool count_field_of(const json_value& o, const char* key, Count& to) {
  const json_value* v = o.get(key);
  if (v == nullptr) return true;
  if (v->k != json_value::kind::number || v->n < 0 || v->n != std::floor(v->n) || v->n > 1e18 ||
      v->n > static_cast<double>(std::numeric_limits<Count>::max()))
    return false;
  to = static_cast<Count>(v->n);
  return true;
}

inline expected<void> parse_identity(const json_value& r, const std::string& where, tuning_record& rec) {
  // Present and a string; what the values must be is record_fault's.
  if (!text_field_of(r, "backend", rec.backend, true))
    return corrupt_tuning(where + ": \"backend\" is missing or not a string");
  if (!text_field_of(r, "device", rec.device, true))
    return corrupt_tuning(where + ": \"device\" is missing or not a string");
  if (!text_field_of(r, "driver", rec.driver_version, true))
    return corrupt_tuning(where + ": \"driver\" is missing or not a string");
  if (!text_field_of(r, "spec", rec.spec) || !text_field_of(r, "name", rec.name) ||
      !text_field_of(r, "measured_at", rec.measured_at))
    return corrupt_tuning(where + ": \"spec\", \"name\" or \"measured_at\" is not a string");
  if (!count_field_of(r, "elements", rec.elements) || !count_field_of(r, "reps", rec.reps))
    return corrupt_tuning(where + ": \"elements\" or \"reps\" is not a whole number");
  return {};
}

inline expected<void> parse_figures(const json_value& r, const std::string& where, tuning_record& rec,
                                    std::vector<error>& warnings) {
  using kind = json_value::kind;
  const json_value* gbps = r.get("gbps");
  if (gbps == nullptr || gbps->k != kind::object) return corrupt_tuning(where + ": \"gbps\" is missing or not an object");
  for (std::size_t t = 0; t < gbps->keys.size(); ++t) {
    element_type type;
    if (gbps->keys[t] == "float") type = element_type::f32;
    else if (gbps->keys[t] == "double") type = element_type::f64;
    else return corrupt_tuning(where + ": unknown element type \"" + gbps->keys[t] + "\"");
    const json_value& ops = gbps->items[t];
    if (ops.k != kind::object) return corrupt_tuning(where + ": \"gbps\"." + gbps->keys[t] + " is not an object");
    for (std::size_t o = 0; o < ops.keys.size(); ++o) {
      const op* found = nullptr;
      for (const op& known : tuning_ops)
        if (to_string(known) == ops.keys[o]) found = &known;
      if (found == nullptr) return corrupt_tuning(where + ": unknown op \"" + ops.keys[o] + "\"");
      if (ops.items[o].k != kind::number)
        return corrupt_tuning(where + ": the GB/s of " + ops.keys[o] + " is not a number");
      rec.figures.push_back({*found, type, ops.items[o].n, 0.0});
    }
  }
  drop_implausible_figures(rec, where, warnings);
  // Optional: each figure's spread and confidence bound, under the same type and op.
  for (const char* key : {"spread", "bound"}) {
    const json_value* field = r.get(key);
    if (field == nullptr) continue;
    if (field->k != kind::object) return corrupt_tuning(where + ": \"" + key + "\" is not an object");
    for (auto& f : rec.figures) {
      const json_value* ops = field->get(to_string(f.type));
      const json_value* v = ops != nullptr && ops->k == kind::object ? ops->get(to_string(f.op)) : nullptr;
      if (v == nullptr) continue;
      if (v->k != kind::number)
        return corrupt_tuning(where + ": the " + key + " of " + std::string(to_string(f.op)) +
                              " is not a number from 0 to 100");
      (key[0] == 's' ? f.spread : f.bound) = v->n;  // its range is record_fault's
    }
  }
  for (auto [key, to] : {std::pair{"interleaved", &rec.interleaved}, {"leads", &rec.leads}}) {
    const json_value* flag = r.get(key);
    if (flag == nullptr) continue;
    if (flag->k != kind::boolean) return corrupt_tuning(where + ": \"" + key + "\" is not true or false");
    *to = flag->b;
  }
  return {};
}

// Reads a positive number field; nullopt when absent, false in `ok` when not positive.
inline std::optional<double> positive_field(const json_value& o, const char* key, bool& ok) {
  const json_value* v = o.get(key);
  if (v == nullptr) return std::nullopt;
  if (v->k != json_value::kind::number || !(v->n > 0)) {
    ok = false;
    return std::nullopt;
  }
  return v->n;
}

inline double spread_field(const json_value& o) {
  const json_value* v = o.get("spread");
  return v != nullptr && v->k == json_value::kind::number && v->n >= 0 ? v->n : 0.0;
}

inline expected<void> parse_shapes(const json_value& r, const std::string& where, tuning_record& rec) {
  using kind = json_value::kind;
  if (const json_value* shapes = r.get("grid_sync_shapes")) {
    if (shapes->k != kind::array) return corrupt_tuning(where + ": \"grid_sync_shapes\" is not an array");
    for (const auto& g : shapes->items) {
      sync_timing t;
      bool ok = g.k == kind::object && text_field_of(g, "shape", t.shape) && !t.shape.empty();
      const auto native = ok ? positive_field(g, "native_ns", ok) : std::nullopt;
      const auto split = ok ? positive_field(g, "split_ns", ok) : std::nullopt;
      if (!ok || !native || !split)
        return corrupt_tuning(where + ": a \"grid_sync_shapes\" entry lacks shape, native_ns or split_ns");
      t.native_ns = *native;
      t.split_ns = *split;
      t.spread = spread_field(g);
      rec.sync_shapes.push_back(std::move(t));
    }
  }
  // Version 1 kept the bench's `triad; grid_sync; dot` timings apart: they are that shape.
  if (const json_value* sync = r.get("grid_sync")) {
    if (sync->k != kind::object) return corrupt_tuning(where + ": \"grid_sync\" is not an object");
    bool ok = true;
    const auto native = positive_field(*sync, "native_ns", ok);
    const auto split = positive_field(*sync, "split_ns", ok);
    if (!ok) return corrupt_tuning(where + ": \"grid_sync\".native_ns or split_ns is not a positive number");
    const bool absent = !rec.split_faster_for("triad|dot").has_value();
    if (native && split && absent) rec.sync_shapes.push_back({"triad|dot", *native, *split, spread_field(*sync)});
  }
  return {};
}

inline expected<void> parse_kernels(const json_value& r, const std::string& where, tuning_record& rec) {
  using kind = json_value::kind;
  const json_value* kernels = r.get("kernels");
  if (kernels == nullptr) return {};
  if (kernels->k != kind::array) return corrupt_tuning(where + ": \"kernels\" is not an array");
  for (const auto& k : kernels->items) {
    kernel_choice c;
    const json_value* type = k.k == kind::object ? k.get("type") : nullptr;
    const json_value* cls = k.k == kind::object ? k.get("size_class") : nullptr;
    const bool texts = k.k == kind::object && text_field_of(k, "op", c.op) && !c.op.empty() &&
                       text_field_of(k, "variant", c.variant) && !c.variant.empty() &&
                       text_field_of(k, "baseline", c.baseline);
    if (!texts || type == nullptr || type->k != kind::string || (type->s != "float" && type->s != "double") ||
        cls == nullptr || cls->k != kind::number || cls->n < 0 || cls->n > 63 || cls->n != std::floor(cls->n))
      return corrupt_tuning(where + ": a \"kernels\" entry lacks op, type, size_class or variant");
    c.type = type->s == "float" ? element_type::f32 : element_type::f64;
    c.size_class = static_cast<std::uint32_t>(cls->n);
    for (const auto& [key, to] :
         {std::pair{"variant_ns", &c.variant_ns}, {"baseline_ns", &c.baseline_ns}, {"spread", &c.spread}})
      if (const json_value* v = k.get(key); v != nullptr && v->k == kind::number && v->n >= 0) *to = v->n;
    rec.kernels.push_back(std::move(c));
  }
  return {};
}

inline expected<tuning_record> parse_record(const json_value& r, std::size_t at, std::vector<error>& warnings) {
  const std::string where = "record " + std::to_string(at);
  if (r.k != json_value::kind::object) return corrupt_tuning(where + " is not an object");
  tuning_record rec;
  if (auto ok = parse_identity(r, where, rec); !ok) return std::move(ok).error();
  if (auto ok = parse_figures(r, where, rec, warnings); !ok) return std::move(ok).error();
  for (auto part : {&parse_shapes, &parse_kernels})
    if (auto ok = part(r, where, rec); !ok) return std::move(ok).error();
  // The values, by the rules save_tuning applies to every record it writes.
  if (const std::string fault = record_fault(rec); !fault.empty()) return corrupt_tuning(where + ": " + fault);
  return rec;
}

// The streaming read. The text is walked once; only the members a record
// has are built, each record within tuning_record_bytes, and everything
// else (unknown keys, records past the limit, the records after a bad one
// when nothing is salvaged) is checked and skipped without being built: a
// 60 MB file of one junk array costs its text and nothing more.
struct tuning_reading {
  tuning_file file;
  std::optional<error> bad;  // the first record that is not valid
  json_value format, version;
  bool has_format = false, has_version = false, has_records = false, records_array = false;

  // Whether "format" says roster-tuning, and "version" one this roster reads (1 or tuning_version).
  [[nodiscard]] bool says_tuning_format() const {
    return has_format && format.k == json_value::kind::string && format.s == tuning_format;
  }
  [[nodiscard]] bool says_readable_version() const {
    return has_version && version.k == json_value::kind::number && (version.n == 1 || version.n == tuning_version);
  }
};

inline bool record_key(std::string_view key) noexcept {
  for (std::string_view k : {"backend", "device", "driver", "spec", "name", "measured_at", "elements", "reps", "gbps",
                             "spread", "bound", "interleaved", "leads", "grid_sync_shapes", "grid_sync", "kernels"})
    if (key == k) return true;
  return false;
}

// Reads one element of "records" into r: the members a record has, within
// tuning_record_bytes (too_large when it held more). False on a syntax error.
inline bool read_record(json_reader& in, json_value& r, bool& too_large) {
  if (in.peek() != '{') return in.skip_value(2);  // r stays null: "is not an object"
  in.enter_object();
  r.k = json_value::kind::object;
  in.limit(tuning_record_bytes);
  bool first = true;
  std::string key;
  while (in.next_member(first, key)) {
    if (!record_key(key) || in.over_budget()) {
      if (!in.skip_value(3)) return false;
      continue;
    }
    // A key of the format twice: the record's values are not defined.
    if (std::find(r.keys.begin(), r.keys.end(), key) != r.keys.end()) return in.duplicate_key(key, in.key_at());
    r.keys.push_back(key);
    r.items.emplace_back();
    if (!in.value(r.items.back(), 3)) return false;
  }
  too_large = in.over_budget();
  return !in.failed();
}

inline bool read_records(json_reader& in, tuning_reading& t, bool salvage) {
  in.enter_array();
  bool first = true;
  for (std::size_t at = 0; in.next_element(first); ++at) {
    const bool full = t.file.records.size() >= tuning_record_limit;
    if (full || (t.bad && !salvage)) {
      if (full) ++t.file.records_left_out;
      if (!in.skip_value(2)) return false;
      continue;
    }
    json_value r;
    bool too_large = false;
    if (!read_record(in, r, too_large)) return false;
    auto rec = too_large ? expected<tuning_record>(corrupt_tuning(
                               "record " + std::to_string(at) + " holds more than " +
                               std::to_string(tuning_record_bytes >> 20) + " MiB of values"))
                         : parse_record(r, at, t.file.warnings);
    if (rec) t.file.records.push_back(std::move(*rec));
    else if (!t.bad) t.bad = std::move(rec).error();
  }
  return !in.failed();
}

inline bool read_top(json_reader& in, tuning_reading& t, bool salvage) {
  in.enter_object();
  bool first = true;
  std::string key;
  while (in.next_member(first, key)) {
    if ((key == "format" && t.has_format) || (key == "version" && t.has_version) ||
        (key == "records" && t.has_records))
      return in.duplicate_key(key, in.key_at());  // two "records": which holds the user's is not known
    json_value* small = key == "format"    ? &t.format
                        : key == "version" ? &t.version
                                           : nullptr;
    if (small != nullptr) {
      (small == &t.format ? t.has_format : t.has_version) = true;
      in.limit(4096);
      if (!in.value(*small, 1)) return false;
      continue;
    }
    if (key == "records") {
      t.has_records = true;
      if (in.peek() == '[') {
        t.records_array = true;
        if (!read_records(in, t, salvage)) return false;
        continue;
      }
    }
    if (!in.skip_value(1)) return false;
  }
  return !in.failed();
}

}  // namespace detail

ROSTER_INLINE std::string to_json(const tuning_file& file) {
  using detail::quote;
  std::string out;
  out += "{\n  \"format\": ";
  quote(out, detail::tuning_format);
  out += ",\n  \"version\": " + std::to_string(detail::tuning_version) + ",\n  \"records\": [";
  bool first = true;
  for (const auto& r : file.records) {
    out += first ? "\n    {" : ",\n    {";
    first = false;
    // Identity on the first line, provenance on the second.
    const std::pair<const char*, const std::string*> fields[] = {
        {"\"backend\": ", &r.backend},   {", \"device\": ", &r.device}, {", \"driver\": ", &r.driver_version},
        {",\n     \"spec\": ", &r.spec}, {", \"name\": ", &r.name},     {", \"measured_at\": ", &r.measured_at}};
    for (const auto& [key, value] : fields) {
      out += key;
      quote(out, *value);
    }
    out += ", \"elements\": " + std::to_string(r.elements) + ", \"reps\": " + std::to_string(r.reps);
    if (r.interleaved) out += ", \"interleaved\": true";
    if (r.leads) out += ", \"leads\": true";
    detail::figures_to_json(out, r);
    detail::shapes_to_json(out, r);
    detail::kernels_to_json(out, r);
    out += "}";
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

ROSTER_INLINE void detail::drop_implausible_figures(tuning_record& r, std::string_view where,
                                                   std::vector<error>& warnings) {
  std::erase_if(r.figures, [&](const tuning_figure& f) {
    if (f.gbps > 0 && f.gbps <= tuning_max_gbps) return false;
    std::string figure;
    json_number(figure, f.gbps);  // the shortest text: 1e+308, not 309 digits
    const std::string bound = std::to_string(static_cast<long long>(tuning_max_gbps));
    warnings.emplace_back(errc::io,
                          std::string(where) + " (" + r.backend + " " + r.device + "): its " +
                              std::string(to_string(f.op)) + " " + std::string(to_string(f.type)) + " figure, " +
                              figure + " GB/s, is " +
                              (f.gbps > 0 ? "beyond any memory's bandwidth (more than " + bound + " GB/s)"
                                          : std::string("not a number above 0")) +
                              "; it is ignored",
                          "measure the adapter again (roster-info bench --adapter " +
                              (r.spec.empty() ? r.backend : r.spec) + ")");
    return true;
  });
}

ROSTER_INLINE std::string detail::record_fault(const tuning_record& r) {
  if (r.backend.empty()) return "\"backend\" is missing or not a string";
  if (r.device.empty()) return "\"device\" is missing or not a string";
  for (std::size_t i = 0; i < r.figures.size(); ++i) {
    const tuning_figure& f = r.figures[i];
    const std::string name(to_string(f.op));
    if (std::find(std::begin(tuning_ops), std::end(tuning_ops), f.op) == std::end(tuning_ops))
      return "unknown op \"" + name + "\"";
    if (f.type != element_type::f32 && f.type != element_type::f64) return "unknown element type of " + name;
    for (std::size_t j = 0; j < i; ++j)
      if (r.figures[j].op == f.op && r.figures[j].type == f.type)
        return "the " + name + " " + std::string(to_string(f.type)) + " figure appears twice";
    if (!(f.spread >= 0) || !(f.spread < 100)) return "the spread of " + name + " is not a number from 0 to 100";
    if (!(f.bound >= 0) || !(f.bound < 100)) return "the bound of " + name + " is not a number from 0 to 100";
  }
  for (const auto& g : r.sync_shapes)
    if (g.shape.empty() || !(g.native_ns > 0) || !(g.split_ns > 0) || !std::isfinite(g.native_ns) ||
        !std::isfinite(g.split_ns) || !std::isfinite(g.spread))
      return "a \"grid_sync_shapes\" entry lacks shape, native_ns or split_ns";
  for (const auto& k : r.kernels)
    if (k.op.empty() || k.variant.empty() || k.size_class > 63 ||
        (k.type != element_type::f32 && k.type != element_type::f64) || !std::isfinite(k.variant_ns) ||
        !std::isfinite(k.baseline_ns) || !std::isfinite(k.spread))
      return "a \"kernels\" entry lacks op, type, size_class or variant";
  return {};
}

ROSTER_INLINE expected<tuning_file> detail::parse_tuning_records(std::string_view text, bool salvage) try {
  // A byte-order mark (an editor on Windows saved the file) is not JSON, but
  // says nothing about the records after it: read past it.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  json_reader in(text);
  tuning_reading t;
  const bool object = in.peek() == '{';
  if (!(object ? read_top(in, t, salvage) : in.skip_value(0)) || !in.finish()) {
    // A syntax error (a hand edit, a copy cut short): when salvaging, the
    // whole records before it are carried over, if the file first said it
    // is a tuning file of a version this roster reads.
    if (salvage && t.records_array && t.says_tuning_format() && t.says_readable_version()) return std::move(t.file);
    return corrupt_tuning("not valid JSON at byte " + std::to_string(in.where()) + " (" + in.why() + ")");
  }
  if (!object) return corrupt_tuning("the top level is not an object");
  if (!t.says_tuning_format())
    return corrupt_tuning("\"format\" is not \"roster-tuning\"");
  if (t.has_version && t.version.k == json_value::kind::number && t.version.n > tuning_version)
    return newer_tuning(t.version.n);
  if (!t.says_readable_version())
    return corrupt_tuning("\"version\" is not 1 or " + std::to_string(tuning_version));
  if (!t.records_array) return corrupt_tuning("\"records\" is not an array");
  if (t.bad && !salvage) return std::move(*t.bad);
  if (t.file.records_left_out > 0)
    t.file.warnings.emplace_back(
        errc::io,
        "tuning file: it holds " + std::to_string(t.file.records.size() + t.file.records_left_out) +
            " records; only the first " + std::to_string(tuning_record_limit) + " are read",
        "take the records of devices no longer in use out of the file (roster-info bench --export writes a "
        "fresh one elsewhere); a site file shared by identical nodes needs one record per model (roster-info "
        "bench --export)");
  return std::move(t.file);
} catch (const std::bad_alloc&) {
  return make_error(errc::out_of_memory, "tuning file: out of memory while reading it; its records are ignored",
                    "give the process more memory (the file is left as it is)");
}

ROSTER_INLINE expected<tuning_file> parse_tuning(std::string_view text) {
  return detail::parse_tuning_records(text, false);
}

}  // namespace roster
