#pragma once
// Private: tuning records to and from JSON.

#include <roster/tuning/format.hpp>
#include <roster/detail/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace roster {

namespace detail {

inline constexpr std::string_view tuning_format = "roster-tuning";
inline constexpr int tuning_version = 2;  // 2: grid-sync timings only per shape ("grid_sync" of 1 is read as "triad|dot")
inline constexpr op tuning_ops[] = {op::copy, op::mul, op::add, op::triad, op::dot};

inline unexpected corrupt_tuning(std::string_view why) {
  return make_error(errc::io, "tuning file: " + std::string(why) + "; its records are ignored",
                    "delete the file (roster keeps working without it) and run 'roster-info bench' to measure again");
}

// Writes `"KEY": {"float": {OP: VALUE, ...}, "double": {...}}` of each figure's value.
template <class Value>
void figures_object(std::string& out, std::string_view key, const tuning_record& r, Value value) {
  out += ",\n     ";
  json_quote(out, key);
  out += ": {";
  bool first_type = true;
  for (element_type t : {element_type::f32, element_type::f64}) {
    std::string ops;
    for (const auto& f : r.figures) {
      if (f.type != t) continue;
      ops += ops.empty() ? "" : ", ";
      json_quote(ops, to_string(f.op));
      ops += ": ";
      json_number(ops, value(f));
    }
    if (ops.empty()) continue;
    out += first_type ? "" : ", ";
    first_type = false;
    json_quote(out, to_string(t));
    out += ": {" + ops + "}";
  }
  out += "}";
}

inline void figures_to_json(std::string& out, const tuning_record& r) {
  figures_object(out, "gbps", r, [](const tuning_figure& f) { return f.gbps; });
  // The reps' spreads, when measured: the decision rule's noise (detail/decision.hpp).
  if (std::any_of(r.figures.begin(), r.figures.end(), [](const tuning_figure& f) { return f.spread > 0; }))
    figures_object(out, "spread", r, [](const tuning_figure& f) { return f.spread; });
}

inline void shapes_to_json(std::string& out, const tuning_record& r) {
  if (r.sync_shapes.empty()) return;
  out += ",\n     \"grid_sync_shapes\": [";
  bool first = true;
  for (const auto& g : r.sync_shapes) {
    out += first ? "\n       {\"shape\": " : ",\n       {\"shape\": ";
    first = false;
    json_quote(out, g.shape);
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
    json_quote(out, k.op);
    out += ", \"type\": ";
    json_quote(out, to_string(k.type));
    out += ", \"size_class\": " + std::to_string(k.size_class) + ", \"variant\": ";
    json_quote(out, k.variant);
    out += ", \"baseline\": ";
    json_quote(out, k.baseline);
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
  if (!text_field_of(r, "backend", rec.backend, true) || rec.backend.empty())
    return corrupt_tuning(where + ": \"backend\" is missing or not a string");
  if (!text_field_of(r, "device", rec.device, true) || rec.device.empty())
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

inline expected<void> parse_figures(const json_value& r, const std::string& where, tuning_record& rec) {
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
      if (ops.items[o].k != kind::number || !(ops.items[o].n >= 0))
        return corrupt_tuning(where + ": the GB/s of " + ops.keys[o] + " is not a non-negative number");
      rec.figures.push_back({*found, type, ops.items[o].n, 0.0});
    }
  }
  // Optional: each figure's spread, under the same type and op.
  if (const json_value* spread = r.get("spread")) {
    if (spread->k != kind::object) return corrupt_tuning(where + ": \"spread\" is not an object");
    for (auto& f : rec.figures) {
      const json_value* ops = spread->get(to_string(f.type));
      const json_value* v = ops != nullptr && ops->k == kind::object ? ops->get(to_string(f.op)) : nullptr;
      if (v == nullptr) continue;
      if (v->k != kind::number || !(v->n >= 0) || !(v->n < 100))
        return corrupt_tuning(where + ": the spread of " + std::string(to_string(f.op)) + " is not a number from 0 to 100");
      f.spread = v->n;
    }
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

inline expected<tuning_record> parse_record(const json_value& r, std::size_t at) {
  const std::string where = "record " + std::to_string(at);
  if (r.k != json_value::kind::object) return corrupt_tuning(where + " is not an object");
  tuning_record rec;
  for (auto part : {&parse_identity, &parse_figures, &parse_shapes, &parse_kernels})
    if (auto ok = part(r, where, rec); !ok) return std::move(ok).error();
  return rec;
}

}  // namespace detail

ROSTER_INLINE std::string to_json(const tuning_file& file) {
  using detail::json_quote;
  std::string out;
  out += "{\n  \"format\": ";
  json_quote(out, detail::tuning_format);
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
      json_quote(out, *value);
    }
    out += ", \"elements\": " + std::to_string(r.elements) + ", \"reps\": " + std::to_string(r.reps);
    detail::figures_to_json(out, r);
    detail::shapes_to_json(out, r);
    detail::kernels_to_json(out, r);
    out += "}";
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

ROSTER_INLINE expected<tuning_file> detail::parse_tuning_records(std::string_view text, bool salvage) {
  using kind = json_value::kind;
  json_value root;
  json_reader reader(text);
  if (!reader.parse(root))
    return corrupt_tuning("not valid JSON at byte " + std::to_string(reader.where()) + " (" + reader.why() + ")");
  if (root.k != kind::object) return corrupt_tuning("the top level is not an object");
  const json_value* format = root.get("format");
  if (format == nullptr || format->k != kind::string || format->s != tuning_format)
    return corrupt_tuning("\"format\" is not \"roster-tuning\"");
  const json_value* version = root.get("version");
  if (version == nullptr || version->k != kind::number || (version->n != 1 && version->n != tuning_version))
    return corrupt_tuning("\"version\" is not 1 or " + std::to_string(tuning_version));
  const json_value* records = root.get("records");
  if (records == nullptr || records->k != kind::array) return corrupt_tuning("\"records\" is not an array");
  tuning_file out;
  std::size_t index = 0;
  for (const auto& r : records->items) {
    auto rec = parse_record(r, index++);
    if (rec) out.records.push_back(std::move(*rec));
    else if (!salvage) return std::move(rec).error();
  }
  return out;
}

ROSTER_INLINE expected<tuning_file> parse_tuning(std::string_view text) {
  return detail::parse_tuning_records(text, false);
}

}  // namespace roster
