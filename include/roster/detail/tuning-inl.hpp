#pragma once
// Private: the tuning file's format (records to and from JSON), its load and
// locked save, the lookups, and the per-process cache of the default file.

#include <roster/tuning.hpp>
#include <roster/detail/env.hpp>
#include <roster/detail/file_io.hpp>
#include <roster/detail/json.hpp>
#include <roster/detail/text.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <limits>
#include <mutex>
#include <string>

namespace roster {

namespace detail {

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
    // Identity on the first line, provenance on the second.
    const std::pair<const char*, const std::string*> fields[] = {
        {"\"backend\": ", &r.backend}, {", \"device\": ", &r.device},        {", \"driver\": ", &r.driver_version},
        {",\n     \"spec\": ", &r.spec}, {", \"name\": ", &r.name}, {", \"measured_at\": ", &r.measured_at}};
    for (const auto& [key, value] : fields) {
      out += key;
      json_quote(out, *value);
    }
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
      if (r.sync_spread) {
        out += ", \"spread\": ";
        json_number(out, *r.sync_spread);
      }
      out += "}";
    }
    if (!r.sync_shapes.empty()) {
      out += ",\n     \"grid_sync_shapes\": [";
      bool first_shape = true;
      for (const auto& g : r.sync_shapes) {
        out += first_shape ? "\n       {\"shape\": " : ",\n       {\"shape\": ";
        first_shape = false;
        json_quote(out, g.shape);
        for (const auto& [key, value] : {std::pair{", \"native_ns\": ", g.native_ns},
                                         {", \"split_ns\": ", g.split_ns}, {", \"spread\": ", g.spread}}) {
          out += key;
          json_number(out, value);
        }
        out += "}";
      }
      out += "]";
    }
    if (!r.kernels.empty()) {
      out += ",\n     \"kernels\": [";
      bool first_kernel = true;
      for (const auto& k : r.kernels) {
        out += first_kernel ? "\n       {\"op\": " : ",\n       {\"op\": ";
        first_kernel = false;
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
    out += "}";
  }
  out += first ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

namespace detail {
// Reads an optional string field of a JSON object; false when it is not a string.
inline bool text_field_of(const json_value& o, const char* key, std::string& to) {
  const json_value* v = o.get(key);
  if (v == nullptr) return true;
  if (v->k != json_value::kind::string) return false;
  to = v->s;
  return true;
}

// Parses a tuning file; with salvage, a record that is not valid is skipped
// instead of failing the whole file (what a corrupt file carries over).
inline expected<tuning_file> parse_tuning_records(std::string_view text, bool salvage) {
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
  auto one = [&](const json_value& r, std::size_t at) -> expected<tuning_record> {
    const std::string where = "record " + std::to_string(at);
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
      if (const json_value* v = sync->get("spread"); v != nullptr && v->k == kind::number && v->n >= 0)
        rec.sync_spread = v->n;
    }
    if (const json_value* shapes = r.get("grid_sync_shapes")) {  // absent in files written before shapes
      if (shapes->k != kind::array) return detail::corrupt_tuning(where + ": \"grid_sync_shapes\" is not an array");
      for (const auto& g : shapes->items) {
        sync_timing t;
        const json_value* native = g.k == kind::object ? g.get("native_ns") : nullptr;
        const json_value* split = g.k == kind::object ? g.get("split_ns") : nullptr;
        if (g.k != kind::object || !text_field_of(g, "shape", t.shape) || t.shape.empty() || native == nullptr ||
            split == nullptr || native->k != kind::number || split->k != kind::number || !(native->n > 0) ||
            !(split->n > 0))
          return detail::corrupt_tuning(where + ": a \"grid_sync_shapes\" entry lacks shape, native_ns or split_ns");
        t.native_ns = native->n;
        t.split_ns = split->n;
        if (const json_value* v = g.get("spread"); v != nullptr && v->k == kind::number && v->n >= 0) t.spread = v->n;
        rec.sync_shapes.push_back(std::move(t));
      }
    }
    if (const json_value* kernels = r.get("kernels")) {  // absent in files written before variants
      if (kernels->k != kind::array) return detail::corrupt_tuning(where + ": \"kernels\" is not an array");
      for (const auto& k : kernels->items) {
        kernel_choice c;
        const json_value* type = k.k == kind::object ? k.get("type") : nullptr;
        const json_value* cls = k.k == kind::object ? k.get("size_class") : nullptr;
        const bool texts = k.k == kind::object && text_field_of(k, "op", c.op) && !c.op.empty() &&
                           text_field_of(k, "variant", c.variant) && !c.variant.empty() &&
                           text_field_of(k, "baseline", c.baseline);
        if (!texts || type == nullptr || type->k != kind::string || (type->s != "float" && type->s != "double") ||
            cls == nullptr || cls->k != kind::number || cls->n < 0 || cls->n > 63 || cls->n != std::floor(cls->n))
          return detail::corrupt_tuning(where + ": a \"kernels\" entry lacks op, type, size_class or variant");
        c.type = type->s == "float" ? element_type::f32 : element_type::f64;
        c.size_class = static_cast<std::uint32_t>(cls->n);
        for (const auto& [key, to] : {std::pair{"variant_ns", &c.variant_ns}, {"baseline_ns", &c.baseline_ns},
                                      {"spread", &c.spread}})
          if (const json_value* v = k.get(key); v != nullptr && v->k == kind::number && v->n >= 0) *to = v->n;
        rec.kernels.push_back(std::move(c));
      }
    }
    return rec;
  };
  for (const auto& r : records->items) {
    auto rec = one(r, index++);
    if (rec) out.records.push_back(std::move(*rec));
    else if (!salvage) return std::move(rec).error();
  }
  return out;
}

// The name a corrupt tuning file is kept under: PATH.corrupt-YYYYMMDDTHHMMSSZ.
inline std::string corrupt_name(const std::string& path) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return path + ".corrupt-" + stamp;
}
}  // namespace detail

ROSTER_INLINE expected<tuning_file> parse_tuning(std::string_view text) {
  return detail::parse_tuning_records(text, false);
}


ROSTER_INLINE expected<tuning_file> load_tuning(const std::string& path) {
  auto text = detail::read_file(path, "tuning file");
  if (!text) return std::move(text).error();
  if (!*text) return tuning_file{};  // missing: no records yet
  auto file = parse_tuning(**text);
  if (!file) return std::move(file).error().prepend(path);
  return file;
}

ROSTER_INLINE expected<void> save_tuning(const std::string& path, std::span<const tuning_record> records,
                                        std::string* kept_corrupt) {
  // Read-merge-write under the lock. A file that cannot be read (no
  // permission, a FIFO, an I/O error) is never replaced: its records may be
  // good. A corrupt file is kept beside the new one, and its valid records
  // are carried over.
  return detail::locked_replace(path, "tuning file", [&]() -> expected<std::string> {
    auto text = detail::read_file(path, "tuning file");
    if (!text) {
      const auto& e = text.error();
      return make_error(e.code(), std::string(e.what()) + "; it is not replaced, and no record was written",
                        e.fix());
    }
    tuning_file merged;
    if (*text) {
      if (auto file = parse_tuning(**text)) {
        merged = std::move(*file);
      } else {
        const std::string aside = detail::corrupt_name(path);
        if (::link(path.c_str(), aside.c_str()) != 0)
          return make_error(errc::io,
                            path + ": " + std::string(file.error().what()) + "; it cannot be kept as " + aside +
                                ": " + std::strerror(errno) + ", so it is not replaced",
                            "move the file away yourself, then run the bench again");
        if (kept_corrupt) *kept_corrupt = aside;
        if (auto some = detail::parse_tuning_records(**text, true)) merged = std::move(*some);
        detail::tuning_trace("corrupt file kept as " + aside + "; " + std::to_string(merged.records.size()) +
                             " valid records carried over");
      }
    }
    for (const auto& r : records) {
      auto same = std::find_if(merged.records.begin(), merged.records.end(), [&](const tuning_record& x) {
        return x.backend == r.backend && x.device == r.device;
      });
      if (same == merged.records.end()) {
        merged.records.push_back(r);
        continue;
      }
      tuning_record next = r;
      if (same->driver_version == r.driver_version) {
        // Measured under this driver and not measured again: kept.
        for (const auto& k : same->kernels)
          if (std::none_of(next.kernels.begin(), next.kernels.end(), [&](const kernel_choice& x) {
                return x.op == k.op && x.type == k.type && x.size_class == k.size_class;
              }))
            next.kernels.push_back(k);
        for (const auto& g : same->sync_shapes)
          if (std::none_of(next.sync_shapes.begin(), next.sync_shapes.end(),
                           [&](const sync_timing& x) { return x.shape == g.shape; }))
            next.sync_shapes.push_back(g);
        if (next.figures.empty() && !next.native_sync_ns && !next.split_sync_ns) {
          next.figures = same->figures;
          next.elements = same->elements;
          next.reps = same->reps;
          next.native_sync_ns = same->native_sync_ns;
          next.split_sync_ns = same->split_sync_ns;
          next.sync_spread = same->sync_spread;
        }
      }
      *same = std::move(next);
    }
    return to_json(merged);
  });
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

// The records of the default file, as snapshots that are never changed once
// published: reload_tuning() retires the current one instead of freeing it,
// so a span from current_tuning() on one thread stays valid while another
// reloads (as the inventory and circuits keep their old tables). A process
// reloads after each bench it runs, so the retired ones stay few and small.
struct tuning_cache {
  std::mutex mutex;
  const tuning_file* current = nullptr;
  std::vector<std::unique_ptr<const tuning_file>> snapshots;
};
inline tuning_cache& the_tuning_cache() {
  static tuning_cache cache;  // function-local: no global constructor
  return cache;
}
}  // namespace detail

ROSTER_INLINE std::span<const tuning_record> current_tuning() {
  auto& cache = detail::the_tuning_cache();
  std::lock_guard lock(cache.mutex);
  if (cache.current == nullptr) {
    auto file = std::make_unique<tuning_file>();
    if (auto path = tuning_path()) {
      if (auto loaded = load_tuning(*path)) *file = std::move(*loaded);
      else detail::tuning_trace("warning: " + loaded.error().message());
    }
    cache.current = file.get();
    cache.snapshots.push_back(std::move(file));
  }
  return cache.current->records;
}

ROSTER_INLINE void reload_tuning() {
  auto& cache = detail::the_tuning_cache();
  std::lock_guard lock(cache.mutex);
  cache.current = nullptr;  // the old snapshot stays alive: spans into it remain valid
}

ROSTER_INLINE std::span<const kernel_choice> kernel_choices_for(const adapter_info& a) {
  auto m = detail::find_tuning_traced(current_tuning(), a);
  if (m.record == nullptr) return {};
  return m.record->kernels;
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

ROSTER_INLINE std::string program_shape(std::span<const step> steps) {
  std::string out;
  bool after_sync = true;
  for (const auto& s : steps) {
    if (s.op == op::grid_sync) {
      out += '|';
      after_sync = true;
      continue;
    }
    if (!after_sync) out += ',';
    after_sync = false;
    out += s.op == op::call ? std::string_view(s.call->op) : to_string(s.op);
  }
  return out;
}

ROSTER_INLINE bool has_shape(std::span<const step> steps, std::string_view shape) noexcept {
  // program_shape(steps) == shape, compared piece by piece: a dispatch asks this.
  std::size_t at = 0;
  bool after_sync = true;
  auto take = [&](std::string_view piece) {
    if (shape.substr(at, piece.size()) != piece) return false;
    at += piece.size();
    return true;
  };
  for (const auto& s : steps) {
    if (s.op == op::grid_sync) {
      if (!take("|")) return false;
      after_sync = true;
      continue;
    }
    if (!after_sync && !take(",")) return false;
    after_sync = false;
    if (!take(s.op == op::call ? std::string_view(s.call->op) : to_string(s.op))) return false;
  }
  return at == shape.size();
}

ROSTER_INLINE std::vector<std::string> split_shapes_for(const adapter_info& a) {
  std::vector<std::string> out;
  if (!a.native_grid_sync) return out;
  auto m = detail::find_tuning_traced(current_tuning(), a);
  if (m.record == nullptr) return out;
  for (const auto& g : m.record->sync_shapes)
    if (g.split_faster()) out.push_back(g.shape);
  const bool listed = std::any_of(m.record->sync_shapes.begin(), m.record->sync_shapes.end(),
                                  [](const sync_timing& g) { return g.shape == "triad|dot"; });
  if (!listed && m.record->split_faster().value_or(false)) out.emplace_back("triad|dot");
  for (const auto& shape : out)
    detail::tuning_trace(a.spec() + ": grid-sync split for programs of shape '" + shape + "', by record");
  return out;
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
