// roster-info bench: the tuning records it writes.

#include "info.hpp"
#include <roster/decide.hpp>
#include <roster/output.hpp>

#include <fmt/format.h>

#include <ctime>

namespace roster::info {

namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// How long a bench waits for another process measuring into the same
// tuning file: a whole bench of a node takes minutes.
constexpr std::uint32_t measure_lock_wait_ms = 600'000;

}  // namespace

std::shared_ptr<const void> measure_alone(const bench_options& o) {
  if (!o.save) return nullptr;
  auto file = tuning_path();
  if (!file) return nullptr;  // the save says why
  auto held = hold_measure_lock(*file, measure_lock_wait_ms);
  if (held) return std::move(*held);
  // A folder or lock file that cannot be made: the save says the same of
  // the tuning file. Another process past the wait is said here.
  if (held.error().code() == errc::unavailable)
    print_warning(roster::error(held.error()).prepend("measuring without the measure lock"));
  return nullptr;
}

std::optional<roster::error> contended(const bench_result& r, std::uint64_t elements) {
  const tuning_figure* triad = nullptr;
  for (const auto& f : r.figures)
    if (f.op == op::triad && (triad == nullptr || f.type == element_type::f64)) triad = &f;
  if (triad == nullptr) return std::nullopt;
  return contended_triad(r.info, triad->gbps, elements);
}

namespace {

// Returns the tuning record of each adapter with figures and no wrong result.
std::vector<tuning_record> records_of(const std::vector<bench_result>& results, const bench_options& o) {
  auto timed = [](const shape_result& s) { return s.native_ns && s.split_ns && !s.wrong; };
  std::vector<tuning_record> records;
  for (const auto& r : results) {
    if (r.figures.empty() || r.wrong || r.contended) continue;
    tuning_record rec;
    rec.backend = r.info.backend;
    rec.device = tuning_device_key(r.info);
    rec.driver_version = r.info.driver_version;
    rec.spec = r.spec;
    rec.name = r.info.name;
    rec.measured_at = utc_now();
    rec.elements = o.size;
    rec.reps = o.reps;
    rec.figures = r.figures;
    for (const auto& k : r.kernels) rec.kernels.push_back(k.choice);
    for (const auto& s : r.shapes) {
      if (!timed(s)) continue;
      rec.sync_shapes.push_back({s.shape, *s.native_ns, *s.split_ns, s.decision.spread});
    }
    records.push_back(std::move(rec));
  }
  return records;
}

// Warns about each measured adapter whose record a ROSTER_TUNING_PATH file,
// read before the user's, holds by its own device key: that record wins,
// so the figures just saved are not the ones decisions use.
void warn_shadowed(const std::vector<bench_result>& results, const std::string& own) {
  auto paths = tuning_paths();
  if (!paths) return;
  for (const auto& site : *paths) {
    if (site == own) break;  // files after the user's are read after it
    auto file = load_tuning(site);
    if (!file) continue;  // said by roster-info's report
    for (const auto& r : results) {
      if (r.figures.empty() || r.wrong || r.contended) continue;
      const tuning_match m = find_tuning(file->records, r.info);
      if (m.record == nullptr || m.by_model) continue;
      print_warning(roster::error(
          errc::invalid_argument,
          r.spec + ": " + site + " (ROSTER_TUNING_PATH) holds a record for this device and is read before " + own +
              ", so decisions use its figures, not the ones this bench measured",
          "remove that record from " + site + ", or take the file out of ROSTER_TUNING_PATH (a site file keyed by "
          "model, as `roster-info bench --export` writes, does not override a device's own record)"));
    }
  }
}

}  // namespace

bool save_bench_records(const std::vector<bench_result>& results, const bench_options& o) {
  const std::vector<tuning_record> records = records_of(results, o);
  if (records.empty()) return true;
  auto path = tuning_path();
  if (!path) {
    print_error("roster-info bench: the tuning records", path.error());
    return false;
  }
  // One true account: the save says whether it wrote, and a corrupt file
  // it kept aside is named only once the new file is in place.
  auto old = load_tuning(*path);
  std::string kept;
  std::vector<roster::error> warnings;
  auto ok = save_tuning(*path, records, &kept, &warnings);
  for (const auto& w : warnings) print_warning(w);
  if (!ok) {
    // Measured but not kept: a failure, so a script that benches a node
    // before a job does not go on as if the figures were on record.
    print_error("roster-info bench: the tuning records", ok.error());
    return false;
  }
  if (!kept.empty())
    say_error(fmt::format("\nwarning: {}\n(the corrupt file is kept as {}; its valid records are carried over)\n",
                          old ? std::string("the tuning file was corrupt") : one_line_message(old.error()),
                          one_line(kept, 1024)));
  say(fmt::format("\nwrote {} tuning record{} to {}\n", records.size(), records.size() == 1 ? "" : "s",
                  one_line(*path, 1024)));
  warn_shadowed(results, *path);
  return true;
}

bool export_bench_records(const std::vector<bench_result>& results, const bench_options& o) {
  std::vector<tuning_record> records = records_of(results, o);
  if (records.empty()) return true;
  for (auto& rec : records) {
    adapter_info model;
    model.name = rec.name;
    rec.device = tuning_model_key(model);  // matched by model and driver on every node with this device
  }
  // A stream (--export /dev/stdout >> run.log, a pipe) gets these records
  // as a tuning file's text: it is neither read, merged, locked nor renamed.
  tuning_file exported;
  exported.records = records;
  if (auto streamed = write_stream_output(o.export_path, to_json(exported), "--export")) {
    if (!*streamed) {
      print_error("roster-info bench", streamed->error());
      return false;
    }
    say(fmt::format("\nexported {} record{} by device model to {}\n", records.size(), records.size() == 1 ? "" : "s",
                    one_line(o.export_path, 1024)));
    return true;
  }
  std::string kept;
  std::vector<roster::error> warnings;
  auto ok = save_tuning(o.export_path, records, &kept, &warnings);
  for (const auto& w : warnings) print_warning(w);
  if (!ok) {
    print_error("roster-info bench: --export " + o.export_path, ok.error());
    return false;
  }
  if (!kept.empty())
    say_error(fmt::format("\nwarning: {} was corrupt; it is kept as {}\n", one_line(o.export_path, 1024),
                          one_line(kept, 1024)));
  say(fmt::format("\nexported {} record{} by device model to {}\n", records.size(), records.size() == 1 ? "" : "s",
                  one_line(o.export_path, 1024)));
  return true;
}

}  // namespace roster::info
