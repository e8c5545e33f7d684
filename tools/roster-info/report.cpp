// roster-info without a subcommand: backends, adapters, circuits.

#include "info.hpp"

#include <roster/acquire.hpp>
#include <roster/circuits.hpp>
#include <roster/plugins.hpp>
#include <roster/detail/env.hpp>
#include <roster/ranking.hpp>
#include <roster/select.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace roster::info {

std::string short_uuid(const adapter_info& a) {
  if (!a.has_uuid()) return "-";
  return a.uuid_string().substr(0, 12);
}

std::string memory_text(std::uint64_t bytes) {
  if (bytes == 0) return "-";
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / double(1ull << 30));
}

std::string duration_text(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

report gather() {
  report r;
  r.version = ROSTER_INFO_VERSION;
  // First: the first collection of the backend inventory happens here.
  r.inventory = inventory_info<backend_registration>();
  if (const auto req = detail::env_text(detail::env_require)) r.requirement = std::string(*req);
  if (const auto sel = detail::env_text(detail::env_device_selector)) r.selector = std::string(*sel);

  auto selector = selector_from_env();
  if (!selector) r.warnings.push_back(selector.error());

  auto records = current_tuning();
  if (auto path = tuning_path()) {
    r.tuning_path = *path;
    if (auto file = load_tuning(*path); !file) r.warnings.push_back(file.error());
    else r.tuning_records = file->records.size();
  } else {
    r.warnings.push_back(path.error());
  }

  for (const auto& b : registered_backends()) {
    backend_row row;
    row.id = std::string(b.id());
    row.rank = b.rank;
    row.dispatches = b.dispatches;
    auto list = enumerate_adapters(*b.registration);
    if (!list) {
      row.error = list.error();
    } else {
      row.adapters = list->size();
      for (auto& a : *list) {
        adapter_row ar;
        ar.info = std::move(a);
        if (selector) {
          auto verdict = selector->judge(ar.info);
          ar.selected = verdict.kept;
          if (!verdict.kept) ar.selector_reason = verdict.reason;
        }
        auto m = find_tuning(records, ar.info);
        if (m.record != nullptr) {
          ar.triad_gbps = m.record->triad_bandwidth();
          ar.sync_shapes = m.record->sync_shapes;  // a version 1 file's triad|dot timings are read as that shape
        }
        ar.stale_record = m.record == nullptr && m.stale != nullptr;
        r.adapters.push_back(std::move(ar));
      }
      if (b.dispatches) {
        auto d = acquire(std::string(b.id()) + ":0", acquire_options{.wrap = false});
        if (d) row.opened = true;
        else row.error = d.error();
      }
    }
    r.backends.push_back(std::move(row));
  }
  // Two backends on one id: acquire refuses the id; say so here too.
  if (auto ok = check_backends(); !ok) r.warnings.push_back(ok.error());

  // Plugin files that ROSTER_PLUGIN_PATH named and roster did not open, and why.
  for (auto& e : refused_plugins()) r.warnings.push_back(std::move(e));

  use_tuning_ranking();
  if (auto cs = circuits()) {
    const circuit* p = primary();
    const circuit* x = auxiliary();
    for (const auto& c : *cs) {
      circuit_row cr;
      cr.index = c.index;
      cr.role = (p != nullptr && p->index == c.index) ? "primary"
                : (x != nullptr && x->index == c.index) ? "auxiliary"
                                                         : "";
      cr.preferred = c.adapter.spec();
      cr.adapters.push_back(cr.preferred);
      for (const auto& alt : c.alternates) cr.adapters.push_back(alt.spec());
      cr.name = c.adapter.name;
      cr.type = std::string(to_string(c.type()));
      cr.identity = c.identity();
      cr.score = c.score;
      cr.occupancy = c.occupancy;
      r.circuits.push_back(std::move(cr));
    }
    r.requirement_holds = !cs->empty();
  } else if (selector) {  // a selector error is already reported
    r.warnings.push_back(cs.error());
  }
  return r;
}

namespace {

// Pads columns to their widest cell; the last column is not padded.
std::string columns(const std::vector<std::vector<std::string>>& rows, std::string_view indent = "  ") {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string indent_lines(std::string_view text, std::string_view indent) {
  std::string out;
  std::size_t at = 0;
  while (at <= text.size()) {
    auto nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    out += std::string(indent) + std::string(text.substr(at, nl - at)) + "\n";
    at = nl + 1;
  }
  return out;
}

std::string rank_text(int rank) { return rank == unranked ? std::string("-") : std::to_string(rank); }

}  // namespace

std::string render_table(const report& r) {
  std::string out;
  out += fmt::format("roster {}: {} backend{} registered; first inventory collection took {} ({} entr{}, {} module{})\n",
                     r.version, r.backends.size(), r.backends.size() == 1 ? "" : "s",
                     duration_text(static_cast<double>(r.inventory.collect_ns)), r.inventory.entries,
                     r.inventory.entries == 1 ? "y" : "ies", r.inventory.modules, r.inventory.modules == 1 ? "" : "s");
  if (!r.selector.empty()) out += fmt::format("ROSTER_DEVICE_SELECTOR={}\n", r.selector);
  if (!r.requirement.empty())
    out += fmt::format("ROSTER_REQUIRE={} ({})\n", r.requirement,
                       r.requirement_holds ? "holds" : "does not hold: no visible device satisfies it");

  out += "\nBackends\n";
  std::vector<std::vector<std::string>> rows{{"rank", "backend", "capability", "status", "adapters"}};
  for (const auto& b : r.backends)
    rows.push_back({rank_text(b.rank), b.id, b.dispatches ? "dispatches" : "emits code",
                    b.opened ? "opened" : (b.dispatches ? "not opened" : "-"), std::to_string(b.adapters)});
  if (r.backends.empty()) rows.push_back({"-", "(none registered)", "", "", ""});
  out += columns(rows);
  for (const auto& b : r.backends)
    if (b.error) out += fmt::format("  {}: {}", b.id, indent_lines(b.error->message(), "    ").substr(4));

  out += "\nAdapters\n";
  rows = {{"spec", "name", "type", "uuid", "pci", "memory", "driver", "triad"}};
  std::vector<std::string> dropped;
  for (const auto& a : r.adapters) {
    if (!a.selected) {
      dropped.push_back(a.info.spec());
      continue;
    }
    rows.push_back({a.info.spec(), a.info.name.empty() ? "-" : a.info.name, std::string(to_string(a.info.type)),
                    short_uuid(a.info), a.info.pci_address.empty() ? "-" : a.info.pci_address,
                    memory_text(a.info.memory_bytes), a.info.driver_version.empty() ? "-" : a.info.driver_version,
                    a.triad_gbps ? fmt::format("{:.1f} GB/s", *a.triad_gbps) : (a.stale_record ? "stale" : "-")});
  }
  if (rows.size() == 1) rows.push_back({"-", "(none)", "", "", "", "", "", ""});
  out += columns(rows);
  if (!dropped.empty()) {
    std::string list;
    for (const auto& d : dropped) list += (list.empty() ? "" : ", ") + d;
    out += fmt::format("  dropped by ROSTER_DEVICE_SELECTOR: {}\n", list);
  }

  out += "\nCircuits\n";
  rows = {{"#", "role", "preferred", "adapters", "type", "name"}};
  for (const auto& c : r.circuits) {
    std::string list;
    for (const auto& a : c.adapters) list += (list.empty() ? "" : " ") + a;
    rows.push_back({std::to_string(c.index), c.role.empty() ? "-" : c.role, c.preferred, list, c.type,
                    c.name.empty() ? "-" : c.name});
  }
  if (r.circuits.empty()) rows.push_back({"-", "(none)", "", "", "", ""});
  out += columns(rows);
  for (const auto& c : r.circuits)
    if (const auto& o = c.occupancy) {
      std::size_t others = 0;
      for (unsigned pid : o->pids) others += pid != static_cast<unsigned>(::getpid()) ? 1 : 0;
      out += fmt::format("  {}: {} of {} free, compute mode {}, {} other process{}{}\n", c.index,
                         memory_text(o->memory_free), memory_text(o->memory_total), to_string(o->mode), others,
                         others == 1 ? "" : "es",
                         o->mig_enabled ? fmt::format(", MIG on ({} instances)", o->mig_uuids.size()) : "");
    }

  out += fmt::format("\nTuning: {} ({} record{})\n", r.tuning_path.empty() ? "-" : r.tuning_path, r.tuning_records,
                     r.tuning_records == 1 ? "" : "s");
  for (const auto& w : r.warnings) out += "\nwarning: " + w.message() + "\n";
  return out;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    // The length of a well-formed sequence starting here (RFC 3629), or 0.
    std::size_t len = 0;
    if (c < 0x80) len = 1;
    else if (c >= 0xc2 && c <= 0xdf) len = 2;
    else if (c >= 0xe0 && c <= 0xef) len = 3;
    else if (c >= 0xf0 && c <= 0xf4) len = 4;
    if (len > 1) {
      if (i + len > n) len = 0;
      for (std::size_t k = 1; k < len; ++k)
        if ((p[i + k] & 0xc0) != 0x80) len = 0;
      // No overlong forms, no surrogates, nothing past U+10FFFF.
      if (len == 3 && ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] > 0x9f))) len = 0;
      if (len == 4 && ((c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] > 0x8f))) len = 0;
    }
    if (len == 0) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

void make_valid_utf8(nlohmann::json& value) {
  if (value.is_string()) {
    auto& s = value.get_ref<std::string&>();
    std::string fixed = valid_utf8(s);
    if (fixed != s) s = std::move(fixed);
  } else if (value.is_array()) {
    for (auto& v : value) make_valid_utf8(v);
  } else if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [k, v] : value.items()) {
      make_valid_utf8(v);
      out[valid_utf8(k)] = std::move(v);
    }
    value = std::move(out);
  }
}

nlohmann::json error_json(const roster::error& e) {
  return {{"code", std::string(to_string(e.code()))},
          {"message", e.message()},
          {"what", std::string(e.what())},
          {"fix", std::string(e.fix())}};
}

void print_error(std::string_view context, const roster::error& e) {
  fmt::print(stderr, "{}{}{}\nFix: {}\n", context, context.empty() ? "" : ": ", e.what(), e.fix());
}

namespace {

// The grid-sync timings of a record, one object per program shape.
nlohmann::json sync_shapes_json(const std::vector<sync_timing>& shapes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : shapes)
    out.push_back({{"shape", g.shape},
                   {"native_ns", g.native_ns},
                   {"split_ns", g.split_ns},
                   {"spread", g.spread},
                   {"split_faster", g.split_faster()}});
  return out;
}

}  // namespace

nlohmann::json render_json(const report& r) {
  using nlohmann::json;
  json doc;
  doc["format"] = "roster-info";
  doc["format_version"] = 1;
  doc["roster_version"] = r.version;
  doc["inventory"] = {{"entries", r.inventory.entries},
                      {"modules", r.inventory.modules},
                      {"collect_ns", r.inventory.collect_ns},
                      {"duplicates", r.inventory.duplicates},
                      {"conflicts", r.inventory.conflicts}};
  doc["selector"] = r.selector.empty() ? json(nullptr) : json(r.selector);
  doc["requirement"] = r.requirement.empty() ? json(nullptr)
                                             : json({{"text", r.requirement}, {"holds", r.requirement_holds}});
  json backends = json::array();
  for (const auto& b : r.backends)
    backends.push_back({{"id", b.id},
                        {"rank", b.rank == unranked ? json(nullptr) : json(b.rank)},
                        {"dispatches", b.dispatches},
                        {"opened", b.opened},
                        {"adapters", b.adapters},
                        {"error", b.error ? error_json(*b.error) : json(nullptr)}});
  doc["backends"] = backends;
  json adapters = json::array();
  for (const auto& a : r.adapters) {
    const auto& i = a.info;
    adapters.push_back({{"spec", i.spec()},
                        {"backend", i.backend},
                        {"ordinal", i.ordinal},
                        {"name", i.name},
                        {"type", std::string(to_string(i.type))},
                        {"uuid", i.has_uuid() ? json(i.uuid_string()) : json(nullptr)},
                        {"uuid_short", i.has_uuid() ? json(short_uuid(i)) : json(nullptr)},
                        {"pci_address", i.pci_address.empty() ? json(nullptr) : json(i.pci_address)},
                        {"vendor_id", i.vendor_id},
                        {"device_id", i.device_id},
                        {"memory_bytes", i.memory_bytes},
                        {"driver_version", i.driver_version},
                        {"compute_units", i.compute_units},
                        {"native_grid_sync", i.native_grid_sync},
                        {"f64", i.f64},
                        {"selected", a.selected},
                        {"selector_reason", a.selected ? json(nullptr) : json(a.selector_reason)},
                        {"triad_gbps", a.triad_gbps ? json(*a.triad_gbps) : json(nullptr)},
                        {"stale_record", a.stale_record},
                        {"grid_sync_shapes", sync_shapes_json(a.sync_shapes)}});
  }
  doc["adapters"] = adapters;
  json circuits = json::array();
  for (const auto& c : r.circuits)
    circuits.push_back({{"index", c.index},
                        {"role", c.role.empty() ? json(nullptr) : json(c.role)},
                        {"preferred", c.preferred},
                        {"adapters", c.adapters},
                        {"type", c.type},
                        {"name", c.name},
                        {"identity", c.identity},
                        {"score", c.score ? json(*c.score) : json(nullptr)},
                        {"occupancy", c.occupancy ? json({{"source", c.occupancy->source},
                                                          {"memory_total", c.occupancy->memory_total},
                                                          {"memory_free", c.occupancy->memory_free},
                                                          {"compute_mode", std::string(to_string(c.occupancy->mode))},
                                                          {"mig_enabled", c.occupancy->mig_enabled},
                                                          {"mig_uuids", c.occupancy->mig_uuids},
                                                          {"pids", c.occupancy->pids}})
                                                  : json(nullptr)}});
  doc["circuits"] = circuits;
  doc["tuning"] = {{"path", r.tuning_path.empty() ? json(nullptr) : json(r.tuning_path)},
                   {"records", r.tuning_records}};
  json warnings = json::array();
  for (const auto& w : r.warnings) warnings.push_back(error_json(w));
  doc["warnings"] = warnings;
  // The selector, paths, names and messages come from the environment and
  // the drivers: any of them may hold bytes that are not UTF-8.
  make_valid_utf8(doc);
  return doc;
}

}  // namespace roster::info
