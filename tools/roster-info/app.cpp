// roster-info's command line.

#include "info.hpp"

#include <roster/acquire.hpp>
#include <roster/binding.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <unistd.h>

namespace roster::info {

namespace {

// Reads an element count: 1000000, 16M, 2^28 (K, M, G are powers of 1024).
std::optional<std::uint64_t> parse_count(std::string text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  if (text.size() > 2 && text[0] == '2' && text[1] == '^') {
    std::uint64_t e = 0;
    for (std::size_t i = 2; i < text.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
      e = e * 10 + static_cast<std::uint64_t>(text[i] - '0');
      if (e > 40) return std::nullopt;
    }
    return std::uint64_t{1} << e;
  }
  std::uint64_t scale = 1;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (last == 'K' || last == 'M' || last == 'G') {
    scale = last == 'K' ? 1ull << 10 : last == 'M' ? 1ull << 20 : 1ull << 30;
    text.pop_back();
  }
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value > (1ull << 40)) return std::nullopt;
  }
  value *= scale;
  if (value == 0 || value > (1ull << 40)) return std::nullopt;
  return value;
}

}  // namespace

expected<std::vector<std::vector<op>>> parse_bench_shape(std::string_view shape) {
  const std::string fix =
      "write the bench's ops (copy, mul, add, triad, dot) joined by ',' within one launch and '|' where the program "
      "syncs the grid, e.g. --shape \"copy|dot\" or --shape \"copy,mul|dot\"";
  auto refuse = [&](const std::string& why) -> expected<std::vector<std::vector<op>>> {
    return make_error(errc::invalid_argument, "'" + std::string(shape) + "' is not a grid-sync program shape: " + why,
                      fix);
  };
  std::vector<std::vector<op>> pieces(1);
  std::size_t at = 0;
  while (true) {
    const std::size_t end = shape.find_first_of(",|", at);
    const std::string_view name = shape.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (name.empty()) return refuse("an op is missing before or after a ',' or '|'");
    const op* found = std::find_if(std::begin(bench_ops), std::end(bench_ops),
                                   [&](op x) { return to_string(x) == name; });
    if (found == std::end(bench_ops))
      return refuse("unknown op '" + std::string(name) + "' (the bench's ops: copy, mul, add, triad, dot)");
    pieces.back().push_back(*found);
    if (end == std::string_view::npos) break;
    if (shape[end] == '|') pieces.emplace_back();
    at = end + 1;
  }
  if (pieces.size() < 2) return refuse("it has no '|' (grid_sync), so native and split would run it alike");
  return pieces;
}

bool stdout_written(std::string_view what) {
  errno = 0;
  const bool ok = std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
  if (ok) return true;
  const int e = errno != 0 ? errno : EIO;
  print_error("roster-info", roster::error(roster::errc::io,
                                           std::string(what) + " could not be written to standard output: " +
                                               std::strerror(e),
                                           "free space on the disk it goes to, or send the output elsewhere"));
  return false;
}

int run_bind(bool pin) {
  auto b = roster::bind_rank(roster::bind_options{.pin_cpus = pin});
  if (!b) {
    print_error("roster-info bind", b.error());
    return bind_failed;
  }
  try {
    fmt::print("{}\n", roster::binding_record(*b));
  } catch (const std::exception&) {
    // fmt reports a failed write by throwing; stdout_written says why.
  }
  return stdout_written("the binding") ? 0 : output_failed;
}

int main(int argc, char** argv) {
  CLI::App app{"roster-info: the backends, adapters and circuits roster finds on this node, and what they measure.\n"
               "Honours ROSTER_DEVICE_SELECTOR and ROSTER_TRACE; `roster-info bench --help` for the STREAM bench."};
  app.set_version_flag("--version", std::string("roster-info ") + ROSTER_INFO_VERSION);
  bool json = false;
  std::vector<std::string> require;
  app.add_flag("--json", json, "Print the report as JSON (schema: roster-info.schema.json)");
  app.add_option("--require", require,
                 "Exit with status 3 unless this backend is registered and opens (repeatable)")
      ->type_name("BACKEND")
      ->take_all()
      ->allow_extra_args(false);

  bench_options bench;
  std::string size_text = "2^24";
  bool no_save = false;
  auto* bench_cmd = app.add_subcommand("bench", "Run the STREAM set (copy, mul, add, triad, dot; float and double) "
                                                "and save tuning records");
  bench_cmd->add_option("--adapter", bench.adapters, "Measure only this adapter, e.g. cuda:1 (repeatable)")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  bench_cmd->add_option("--size", size_text, "Elements per array: 1000000, 16M, 2^28 (default 2^24)")
      ->type_name("N");
  bench_cmd->add_option("--reps", bench.reps, "Timed repetitions per figure; the median is shown (default 10)")
      ->check(CLI::Range(1u, 1000000u));
  bench_cmd->add_option("--svg", bench.svg, "Also draw the GB/s table as a bar chart into this SVG file")
      ->type_name("FILE");
  bench_cmd->add_flag("--no-save", no_save, "Do not write tuning records");
  std::vector<std::string> shapes;
  bench_cmd->add_option("--shape", shapes,
                        "Time programs of this shape in one launch and cut at their grid_syncs, and record which is "
                        "faster for that shape: ops (copy, mul, add, triad, dot) joined by ',' within a launch and "
                        "'|' for a grid_sync, e.g. \"copy|dot\" (repeatable; default \"triad|dot\")")
      ->type_name("SHAPE")
      ->allow_extra_args(false);
  bool no_kernels = false;
  bench_cmd->add_flag("--no-kernels", no_kernels,
                      "Do not time the variants of registered kernels (each op with more than one variant on an "
                      "adapter's backend is timed, checked and its winner recorded)");

  bool pin = false;
  auto* bind_cmd = app.add_subcommand("bind", "Bind this rank to a device as roster::bind_rank does (run it under "
                                              "mpirun or srun) and print the binding as one JSON line");
  bind_cmd->add_flag("--pin", pin, "Also pin the process to the CPUs local to its device");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : usage_error;
  }

  if (*bench_cmd) {
    if (bench_cmd->count("--svg") > 0 && bench.svg.empty()) {
      print_error("roster-info bench", roster::error(errc::invalid_argument, "--svg names no file",
                                                     "write --svg FILE, e.g. --svg stream.svg"));
      return usage_error;
    }
    auto n = parse_count(size_text);
    if (!n) {
      print_error("roster-info bench: --size " + size_text,
                  roster::error(errc::invalid_argument, "not an element count between 1 and 2^40",
                                "write a count such as 1000000, 16M or 2^28"));
      return usage_error;
    }
    bench.size = *n;
    if (!shapes.empty()) {
      bench.shapes.clear();
      for (const auto& shape : shapes) {
        if (auto ok = parse_bench_shape(shape); !ok) {
          print_error("roster-info bench: --shape " + shape, ok.error());
          return usage_error;
        }
        if (std::find(bench.shapes.begin(), bench.shapes.end(), shape) == bench.shapes.end())
          bench.shapes.push_back(shape);
      }
    }
    bench.save = !no_save;
    bench.kernels = !no_kernels;
    bench.progress = ::isatty(STDOUT_FILENO) == 1;
    try {
      return run_bench(bench);
    } catch (const std::system_error& e) {  // fmt reports a failed write by throwing
      if (stdout_written("the bench results"))
        print_error("roster-info bench", roster::error(errc::io, e.what(), "free space on the disk the output goes to"));
      return output_failed;
    }
  }

  if (*bind_cmd) return run_bind(pin);

  const report r = gather();
  try {
    // replace: a last guard, as render_json already made every string valid.
    if (json) fmt::print("{}\n", render_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    else fmt::print("{}", render_table(r));
  } catch (const std::exception&) {
    // fmt reports a failed write by throwing; stdout_written says why.
  }
  if (!stdout_written(json ? "the JSON report" : "the report")) return output_failed;

  int status = 0;
  for (const auto& want : require) {
    const backend_row* found = nullptr;
    std::string lower;
    for (char c : want) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& b : r.backends)
      if (b.id == lower) found = &b;
    if (found == nullptr) {
      print_error("roster-info: --require " + want,
                  roster::error(errc::not_found,
                                "no backend '" + lower + "' is registered in this build (registered: " +
                                    known_backends() + ")",
                                "build roster with that backend enabled (meson configure -D" + lower +
                                    "=enabled) and link it"));
      status = require_failed;
    } else if (!found->opened) {
      const roster::error why = found->error ? *found->error
                                             : roster::error(errc::unsupported, "it emits code only",
                                                             "require a backend that dispatches");
      print_error("roster-info: --require " + want + ": the backend does not open here", why);
      status = require_failed;
    }
  }
  return status;
}

}  // namespace roster::info
