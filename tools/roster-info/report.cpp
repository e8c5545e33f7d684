// roster-info without a subcommand: backends, adapters, circuits.

#include "info.hpp"

#include <roster/acquire.hpp>
#include <roster/circuits.hpp>
#include <roster/decide.hpp>
#include <roster/env.hpp>
#include <roster/plugins.hpp>
#include <roster/json_writer.hpp>
#include <roster/select.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace roster::info {

std::string short_uuid(const adapter_info& a) {
  if (!a.has_uuid()) return "-";
  const std::string u = a.uuid_string();  // "GPU-" + 8 hex digits for an NVIDIA GPU, else the 8 digits
  return u.substr(0, u.starts_with("GPU-") ? 12 : 8);
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

namespace {

// A backend's row: how many adapters it enumerated (handed out in `adapters`
// when asked) and whether adapter 0 opens, as the report and --require see it.
backend_row row_of(const backend_entry& b, std::vector<adapter_info>* adapters) {
  backend_row row;
  row.id = std::string(b.id());
  row.rank = b.rank;
  row.dispatches = b.dispatches;
  auto list = enumerate_adapters(*b.registration);
  if (!list) {
    row.error = list.error();
    return row;
  }
  row.adapters = list->size();
  if (adapters != nullptr) *adapters = std::move(*list);
  if (b.dispatches) {
    auto d = acquire(std::string(b.id()) + ":0", acquire_options{.wrap = false});
    if (d) row.opened = true;
    else row.error = d.error();
  }
  return row;
}

}  // namespace

std::optional<backend_row> backend_row_of(std::string_view id) {
  backends_in_use pin;
  for (const auto& b : registered_backends())
    if (b.id() == id) return row_of(b, nullptr);
  return std::nullopt;
}

std::optional<roster::error> requirement_error(std::string_view want, const backend_row* row) {
  std::string lower;
  for (char c : want) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (row == nullptr && lower != "cpu" && is_device_kind(lower))
    return roster::error(errc::invalid_argument,
                         "--require " + std::string(want) + ": '" + lower +
                             "' is a kind of device, not a backend (registered: " + known_backends() + ")",
                         "--require names a backend; to require a kind of device set ROSTER_REQUIRE=" + lower);
  if (row == nullptr)
    return roster::error(errc::not_found,
                         "--require " + std::string(want) + ": no backend '" + lower +
                             "' is registered in this build (registered: " + known_backends() + ")",
                         "build roster with that backend enabled (meson configure -D" + lower +
                             "=enabled) and link it");
  if (row->opened) return std::nullopt;
  const roster::error why = row->error ? *row->error
                                       : roster::error(errc::unsupported, "it emits code only",
                                                       "require a backend that dispatches");
  return roster::error(
      why.code(), "--require " + std::string(want) + ": the backend does not open here: " + std::string(why.what()),
      why.fix());
}

int check_requirements(const std::vector<std::string>& require, const std::vector<backend_row>* rows) {
  int status = 0;
  for (const auto& want : require) {
    std::string lower;
    for (char c : want) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::optional<backend_row> opened;
    const backend_row* row = nullptr;
    if (rows != nullptr) {
      for (const auto& b : *rows)
        if (b.id == lower) row = &b;
    } else if ((opened = backend_row_of(lower))) {
      row = &*opened;
    }
    if (auto e = requirement_error(want, row)) {
      print_error("roster-info", *e);
      status = require_failed;
    }
  }
  return status;
}

namespace {

// The adapters the vendor masks (CUDA_VISIBLE_DEVICES and its kin, judged for
// every API as circuits and acquire judge them) leave visible; each one they
// hide goes to `hidden` as "spec (why)", and is neither listed nor opened.
// What the masks could not follow (an entry that names no device, an index
// whose order is unknown, a malformed value) goes to `warnings`.
std::vector<adapter_info> visible_adapters(std::vector<adapter_info> all, std::vector<std::string>& hidden,
                                           std::vector<roster::error>& warnings) {
  mask_view view = apply_vendor_masks(std::move(all));
  for (const auto& note : view.notes)
    warnings.emplace_back(errc::invalid_argument, "vendor mask: " + note,
                          "set the variable to devices this node has (this report lists them; ROSTER_TRACE=1 shows "
                          "how each entry was read), or unset it");
  for (const auto& h : view.hidden) hidden.push_back(h.adapter.spec() + " (" + h.reason + ")");
  return std::move(view.visible);
}

// What roster::decide() chooses for each role, with every reason.
std::vector<decision_row> decide_each_role() {
  std::vector<decision_row> rows;
  for (role which : {role::primary, role::auxiliary}) {
    decision_row row;
    row.role = std::string(to_string(which));
    decision_request req;
    req.role = which;
    if (auto d = decide(req)) {
      row.adapter = d->spec.str();
      row.reasons = d->reasons;
      for (const auto& p : d->passed) row.reasons.push_back("passed over " + p.spec + ": " + p.reason);
    } else {
      row.error = d.error();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The user's tuning file (its path, its count, its warnings) and what is
// wrong with ROSTER_TUNING_PATH's site files.
void read_tuning_files(report& r) {
  if (auto path = tuning_path()) {
    r.tuning_path = *path;
    if (auto file = load_tuning(*path); !file) {
      r.warnings.push_back(file.error());
    } else {
      r.tuning_records = file->records.size();
      for (auto& w : file->warnings) r.warnings.push_back(std::move(w));
    }
  } else {
    r.warnings.push_back(path.error());
  }
  // The site files of ROSTER_TUNING_PATH: a bad entry, a missing or corrupt
  // file was said only under ROSTER_TRACE.
  for (auto& w : tuning_path_warnings()) r.warnings.push_back(std::move(w));
  if (auto paths = tuning_paths())
    for (const auto& site : *paths) {
      if (site == r.tuning_path) continue;
      if (auto file = load_tuning(site); !file)
        r.warnings.push_back(file.error());
      else
        for (auto& w : file->warnings) r.warnings.push_back(std::move(w));
    }
}

}  // namespace

report gather() {
  report r;
  r.version = ROSTER_INFO_VERSION;
  // First: the first collection of the backend inventory happens here.
  r.inventory = inventory_info<backend_registration>();
  if (const auto req = env::text("ROSTER_REQUIRE")) r.requirement = std::string(*req);
  // A requirement that does not parse holds for nothing: its error is the
  // circuits' error, a warning below.
  if (auto req = requirement_from_env(); !req) r.requirement_valid = r.requirement_holds = false;
  if (const auto sel = env::text("ROSTER_DEVICE_SELECTOR")) r.selector = std::string(*sel);

  auto selector = selector_from_env();
  if (!selector) r.warnings.push_back(selector.error());

  std::vector<adapter_info> listed;
  for (const auto& b : registered_backends()) {
    std::vector<adapter_info> list;
    r.backends.push_back(row_of(b, &list));
    for (auto& a : list) listed.push_back(std::move(a));
  }
  // The decisions before the records (the backends are listed and the plugins
  // loaded by now): under ROSTER_TUNING=measure they measure and record,
  // and the adapters' figures and the file's count below then show it.
  r.decisions = decide_each_role();

  auto records = current_tuning();
  read_tuning_files(r);

  for (auto& a : visible_adapters(std::move(listed), r.hidden, r.warnings)) {
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
  // Two backends on one id: acquire refuses the id; say so here too.
  if (auto ok = check_backends(); !ok) r.warnings.push_back(ok.error());

  // Plugin files that ROSTER_PLUGIN_PATH named and roster did not open, and why.
  for (auto& e : refused_plugins()) r.warnings.push_back(std::move(e));

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
      cr.preferred_because = c.preferred_because;
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

std::string one_line(std::string_view s, std::size_t limit) {
  constexpr char hex[] = "0123456789abcdef";
  std::string out;
  const std::string_view shown = s.substr(0, limit);
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const auto c = static_cast<unsigned char>(shown[i]);
    // C0 controls, DEL, and C1 controls written as UTF-8 (U+0080..U+009F).
    const bool c1 = c == 0xc2 && i + 1 < shown.size() && static_cast<unsigned char>(shown[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(shown[i + 1]) <= 0x9f;
    if (c >= 0x20 && c != 0x7f && !c1) {
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      const unsigned char b = c1 ? static_cast<unsigned char>(shown[++i]) : c;
      out += std::string(c1 ? "\\xc2" : "") + "\\x" + hex[b >> 4] + hex[b & 15];
    }
  }
  if (s.size() > limit) out += "... (" + std::to_string(s.size()) + " bytes in all)";
  return out;
}

namespace {

// Pads columns to their widest cell; the last column is not padded. Cells
// hold text from drivers, plugins and the environment: each is one line.
std::string columns(std::vector<std::vector<std::string>> rows, std::string_view indent = "  ") {
  for (auto& row : rows)
    for (auto& cell : row) cell = one_line(cell, 256);
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

std::string render_table(const report& r, bool why) {
  std::string out;
  out += fmt::format("roster {}: {} backend{} registered; first inventory collection took {} ({} entr{}, {} module{})\n",
                     r.version, r.backends.size(), r.backends.size() == 1 ? "" : "s",
                     duration_text(static_cast<double>(r.inventory.collect_ns)), r.inventory.entries,
                     r.inventory.entries == 1 ? "y" : "ies", r.inventory.modules, r.inventory.modules == 1 ? "" : "s");
  if (!r.selector.empty()) out += fmt::format("ROSTER_DEVICE_SELECTOR={}\n", one_line(r.selector, 256));
  if (!r.requirement.empty())
    out += fmt::format("ROSTER_REQUIRE={} ({})\n", one_line(r.requirement, 256),
                       !r.requirement_valid ? "not valid: see the warning below"
                       : r.requirement_holds ? "holds"
                                             : "does not hold: no visible device satisfies it");

  out += "\nBackends\n";
  std::vector<std::vector<std::string>> rows{{"rank", "backend", "capability", "status", "adapters"}};
  for (const auto& b : r.backends)
    rows.push_back({rank_text(b.rank), b.id, b.dispatches ? "dispatches" : "emits code",
                    b.opened ? "opened" : (b.dispatches ? "not opened" : "-"), std::to_string(b.adapters)});
  if (r.backends.empty()) rows.push_back({"-", "(none registered)", "", "", ""});
  out += columns(rows);
  for (const auto& b : r.backends)
    if (b.error) out += "  " + indent_lines(one_line_message(roster::error(*b.error).prepend(b.id)), "    ").substr(4);

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
    out += fmt::format("  dropped by ROSTER_DEVICE_SELECTOR: {}\n", one_line(list, 4096));
  }
  for (const auto& h : r.hidden) out += fmt::format("  hidden by a vendor mask: {}\n", one_line(h, 1024));

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

  for (const auto& c : r.circuits)
    if (c.adapters.size() > 1)
      out += fmt::format("  {}: {} preferred: {}\n", c.index, one_line(c.preferred, 256),
                         one_line(c.preferred_because, 1024));

  out += "\nDecision\n";
  for (const auto& d : r.decisions) {
    if (d.error) {
      out += fmt::format("  {}: none: {}\n", d.role, one_line(d.error->what(), 4096));
      continue;
    }
    out += fmt::format("  {}: {}\n", d.role, one_line(d.adapter, 256));
    if (why)
      for (const auto& reason : d.reasons) out += fmt::format("    {}\n", one_line(reason, 4096));
  }
  if (!why) out += "  (roster-info --why says why)\n";

  out += fmt::format("\nTuning: {} ({} record{})\n", r.tuning_path.empty() ? "-" : one_line(r.tuning_path, 1024),
                     r.tuning_records,
                     r.tuning_records == 1 ? "" : "s");
  for (const auto& w : r.warnings) out += "\nwarning: " + one_line_message(w) + "\n";
  return out;
}

std::string one_line_message(const roster::error& e) {
  return one_line(e.what(), 4096) + "\nFix: " + one_line(e.fix(), 4096);
}

void print_error(std::string_view context, const roster::error& e) {
  say_error(fmt::format("{}{}{}\nFix: {}\n", one_line(context, 512), context.empty() ? "" : ": ",
                        one_line(e.what(), 4096), one_line(e.fix(), 4096)));
}

void print_warning(const roster::error& e) { say_error("\nwarning: " + one_line_message(e) + "\n"); }

namespace {


// An error as {code, message, what, fix}.
void error_json(json_writer& w, const roster::error& e) {
  w.begin_object()
      .member("code", to_string(e.code()))
      .member("message", e.message())
      .member("what", e.what())
      .member("fix", e.fix())
      .end_object();
}

template <class T>
void optional_json(json_writer& w, std::string_view key, const std::optional<T>& v) {
  w.key(key);
  if (v) w.value(*v);
  else w.null();
}

// A text, or null when it is empty.
void text_or_null(json_writer& w, std::string_view key, const std::string& text) {
  w.key(key);
  if (text.empty()) w.null();
  else w.value(text);
}

template <class T>
void list_json(json_writer& w, std::string_view key, const std::vector<T>& items) {
  w.key(key).begin_array();
  for (const auto& x : items) w.value(x);
  w.end_array();
}

// The grid-sync timings of a record, one object per program shape.
void sync_shapes_json(json_writer& w, const std::vector<sync_timing>& shapes) {
  w.key("grid_sync_shapes").begin_array();
  for (const auto& g : shapes)
    w.begin_object()
        .member("shape", g.shape)
        .member("native_ns", g.native_ns)
        .member("split_ns", g.split_ns)
        .member("spread", g.spread)
        .member("split_faster", g.split_faster())
        .end_object();
  w.end_array();
}

void adapter_json(json_writer& w, const adapter_row& a) {
  const auto& i = a.info;
  w.begin_object()
      .member("spec", i.spec())
      .member("backend", i.backend)
      .member("ordinal", i.ordinal)
      .member("name", i.name)
      .member("type", to_string(i.type));
  if (i.has_uuid()) w.member("uuid", i.uuid_string()).member("uuid_short", short_uuid(i));
  else w.key("uuid").null().key("uuid_short").null();
  text_or_null(w, "pci_address", i.pci_address);
  w.member("vendor_id", i.vendor_id)
      .member("device_id", i.device_id)
      .member("memory_bytes", i.memory_bytes)
      .member("driver_version", i.driver_version)
      .member("compute_units", i.compute_units)
      .member("native_grid_sync", i.native_grid_sync)
      .member("f64", i.f64)
      .member("selected", a.selected);
  text_or_null(w, "selector_reason", a.selected ? std::string() : a.selector_reason);
  optional_json(w, "triad_gbps", a.triad_gbps);
  w.member("stale_record", a.stale_record);
  sync_shapes_json(w, a.sync_shapes);
  w.end_object();
}

void circuit_json(json_writer& w, const circuit_row& c) {
  w.begin_object().member("index", c.index);
  text_or_null(w, "role", c.role);
  w.member("preferred", c.preferred).member("preferred_because", c.preferred_because);
  list_json(w, "adapters", c.adapters);
  w.member("type", c.type).member("name", c.name).member("identity", c.identity);
  optional_json(w, "score", c.score);
  w.key("occupancy");
  if (const auto& o = c.occupancy) {
    w.begin_object()
        .member("source", o->source)
        .member("memory_total", o->memory_total)
        .member("memory_free", o->memory_free)
        .member("compute_mode", to_string(o->mode))
        .member("mig_enabled", o->mig_enabled);
    list_json(w, "mig_uuids", o->mig_uuids);
    list_json(w, "pids", o->pids);
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
}

}  // namespace

std::string render_json(const report& r) {
  // The selector, paths, names and messages come from the environment and
  // the drivers: any of them may hold bytes that are not UTF-8, which the
  // writer turns into the text \xNN.
  json_writer w;
  w.begin_object()
      .member("format", "roster-info")
      .member("format_version", 1)
      .member("roster_version", r.version);
  w.key("inventory")
      .begin_object()
      .member("entries", r.inventory.entries)
      .member("modules", r.inventory.modules)
      .member("collect_ns", r.inventory.collect_ns)
      .member("duplicates", r.inventory.duplicates)
      .member("conflicts", r.inventory.conflicts)
      .end_object();
  text_or_null(w, "selector", r.selector);
  w.key("requirement");
  if (r.requirement.empty()) w.null();
  else w.begin_object().member("text", r.requirement).member("holds", r.requirement_holds).end_object();
  w.key("backends").begin_array();
  for (const auto& b : r.backends) {
    w.begin_object().member("id", b.id).key("rank");
    if (b.rank == unranked) w.null();
    else w.value(b.rank);
    w.member("dispatches", b.dispatches).member("opened", b.opened).member("adapters", b.adapters).key("error");
    if (b.error) error_json(w, *b.error);
    else w.null();
    w.end_object();
  }
  w.end_array();
  w.key("adapters").begin_array();
  for (const auto& a : r.adapters) adapter_json(w, a);
  w.end_array();
  w.key("circuits").begin_array();
  for (const auto& c : r.circuits) circuit_json(w, c);
  w.end_array();
  w.key("decisions").begin_array();
  for (const auto& d : r.decisions) {
    w.begin_object().member("role", d.role);
    text_or_null(w, "adapter", d.adapter);
    list_json(w, "reasons", d.reasons);
    w.key("error");
    if (d.error) error_json(w, *d.error);
    else w.null();
    w.end_object();
  }
  w.end_array();
  w.key("tuning").begin_object();
  text_or_null(w, "path", r.tuning_path);
  w.member("records", r.tuning_records).end_object();
  w.key("warnings").begin_array();
  for (const auto& e : r.warnings) error_json(w, e);
  w.end_array();
  w.end_object();
  return w.text() + "\n";
}

}  // namespace roster::info
