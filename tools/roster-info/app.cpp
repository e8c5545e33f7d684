// roster-info's command line.

#include "info.hpp"

#include <roster/acquire.hpp>
#include <roster/binding.hpp>
#include <roster/env.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>
#include <unistd.h>

namespace roster::info {

namespace {

// Reads an element count: 1000000, 16M, 2^28 (K, M, G are powers of 1024),
// at most 2^40; nothing when the text is not one or the count is larger.
std::optional<std::uint64_t> parse_count(std::string text) {
  constexpr std::uint64_t most = std::uint64_t{1} << 40;
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
    if (value > most) return std::nullopt;
  }
  // Checked before the unit multiplies it: 17179869185G would wrap to 2^30.
  if (value == 0 || value > most / scale) return std::nullopt;
  return value * scale;
}

// The exit statuses for --help, from the table docs/roster-info.md repeats.
std::string exit_status_help() {
  std::string out = "Exit status:\n";
  for (const auto& s : exit_statuses) {
    std::string when(s.when);
    when.erase(std::remove(when.begin(), when.end(), '`'), when.end());
    // Wrapped at 100 columns, under a 6-column hanging indent.
    std::string line = fmt::format("  {:<4}", s.code);
    std::istringstream words(when);
    for (std::string word; words >> word;) {
      if (line.size() + 1 + word.size() > 100) {
        out += line + "\n";
        line = std::string(6, ' ');
      } else if (line.size() > 6) {
        line += ' ';
      }
      line += word;
    }
    out += line + "\n";
  }
  return out;
}

int usage(std::string_view context, std::string what, std::string fix) {
  print_error(context, roster::error(errc::invalid_argument, std::move(what), std::move(fix)));
  return usage_error;
}

// What the command line sets, and the subcommands it may name.
struct command_line {
  bool json = false;
  bool why = false;
  std::vector<std::string> require;
  bench_options bench;
  std::string size_text = "2^24";
  bool no_save = false;
  std::vector<std::string> shapes;
  bool no_kernels = false;
  bool pin = false;
  std::string check;
  CLI::App* bench_cmd = nullptr;
  CLI::App* bind_cmd = nullptr;
};

// Adds the options of the report, which the subcommands apply or refuse:
// --json, --why and --require.
void add_report_options(CLI::App& app, command_line& cl) {
  app.add_flag("--json", cl.json, "Print the report as JSON (schema: roster-info.schema.json); bind prints JSON "
                                  "anyway, bench refuses it");
  app.add_flag("--why", cl.why, "Also print every reason of the decision for each role (what ROSTER_TRACE=1 prints)");
  app.add_option("--require", cl.require,
                 "Exit with status 3 unless this backend is registered and opens (repeatable); bench and bind do "
                 "not run then")
      ->type_name("BACKEND")
      ->take_all()
      ->allow_extra_args(false)
      ->check(CLI::Validator(
          [](std::string& id) -> std::string {
            const bool word = !id.empty() && id.size() <= 64 &&
                              id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
                                  std::string::npos;
            if (word) return {};
            return "'" + id + "' is not a backend id\nFix: name one backend per --require (e.g. --require cuda "
                   "--require vulkan; roster-info lists them); for a device type (gpu, discrete, ...) or a list, "
                   "set ROSTER_REQUIRE";
          },
          "BACKEND"));
}

// Adds the bench subcommand and its options.
void add_bench_command(CLI::App& app, command_line& cl) {
  auto* bench_cmd = app.add_subcommand("bench", "Run the STREAM set (copy, mul, add, triad, dot; float and double) "
                                                "and save tuning records");
  bench_cmd->add_option("--adapter", cl.bench.adapters, "Measure only this adapter, e.g. cuda:1 (repeatable)")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  bench_cmd->add_option("--size", cl.size_text, "Elements per array: 1000000, 16M, 2^28 (default 2^24)")
      ->type_name("N");
  bench_cmd->add_option("--reps", cl.bench.reps, "Timed repetitions per figure; the median is shown (default 10)")
      ->check(CLI::Range(1u, 1000000u));
  bench_cmd->add_option("--svg", cl.bench.svg, "Also draw the GB/s table as a bar chart into this SVG file")
      ->type_name("FILE");
  bench_cmd->add_flag("--no-save", cl.no_save, "Do not write tuning records");
  bench_cmd->add_option("--export", cl.bench.export_path,
                        "Also write the records, keyed by device model and driver, into this site file: nodes "
                        "with the same model read them through ROSTER_TUNING_PATH=FILE:~/.cache/roster/tuning.json")
      ->type_name("FILE");
  bench_cmd->add_option("--shape", cl.shapes,
                        "Time programs of this shape in one launch and cut at their grid_syncs, and record which is "
                        "faster for that shape: ops (copy, mul, add, triad, dot) joined by ',' within a launch and "
                        "'|' for a grid_sync, e.g. \"copy|dot\" (repeatable; default \"triad|dot\")")
      ->type_name("SHAPE")
      ->allow_extra_args(false);
  bench_cmd->add_flag("--no-kernels", cl.no_kernels,
                      "Do not time the variants of registered kernels (each op with more than one variant on an "
                      "adapter's backend is timed, checked and its winner recorded)");
  cl.bench_cmd = bench_cmd;
}

// Adds the bind subcommand and its option.
void add_bind_command(CLI::App& app, command_line& cl) {
  cl.bind_cmd = app.add_subcommand("bind", "Bind this rank to a device as roster::bind_rank does (run it under "
                                           "mpirun or srun) and print the binding as one JSON line");
  cl.bind_cmd->add_flag("--pin", cl.pin, "Also pin the process to the CPUs local to its device");
  cl.bind_cmd->add_option("--check", cl.check,
                          "Check a whole job's placement instead of binding: read the lines `roster-info bind` "
                          "printed on every rank from FILE ('-' for standard input), e.g. `mpirun -np 8 roster-info "
                          "bind | roster-info bind --check -`, and print a table (or --json)")
      ->type_name("FILE");
}

// Checks the bench's options, completes them and runs the bench; returns the exit status.
int bench_command(command_line& cl) {
  bench_options& bench = cl.bench;
  if (cl.json)
    return usage("roster-info bench",
                 "--json applies to the report and to bind; the bench prints a table and writes its figures to "
                 "the tuning file",
                 "run roster-info bench without --json, then roster-info --json to see the recorded figures");
  if (cl.bench_cmd->count("--export") > 0 && bench.export_path.empty())
    return usage("roster-info bench", "--export names no file", "write --export FILE, e.g. --export /site/roster.json");
  if (cl.bench_cmd->count("--svg") > 0 && bench.svg.empty())
    return usage("roster-info bench", "--svg names no file", "write --svg FILE, e.g. --svg stream.svg");
  auto n = parse_count(cl.size_text);
  if (!n)
    return usage("roster-info bench: --size " + roster::env::printable(cl.size_text, 64),
                 "not an element count between 1 and 2^40",
                 "write a count such as 1000000, 16M or 2^28");
  bench.size = *n;
  if (!cl.shapes.empty()) {
    bench.shapes.clear();
    for (const auto& shape : cl.shapes) {
      if (auto ok = parse_bench_shape(shape); !ok) {
        print_error("roster-info bench: --shape " + roster::env::printable(shape, 64), ok.error());
        return usage_error;
      }
      if (std::find(bench.shapes.begin(), bench.shapes.end(), shape) == bench.shapes.end())
        bench.shapes.push_back(shape);
    }
  }
  bench.save = !cl.no_save;
  bench.kernels = !cl.no_kernels;
  bench.progress = ::isatty(STDOUT_FILENO) == 1;
  bench.require = cl.require;
  return run_bench(bench);
}

// Parses the command line and runs what it asks for: bench, bind or the report.
int run(int argc, char** argv) {
  CLI::App app{"roster-info: the backends, adapters and circuits roster finds on this node, and what they measure.\n"
               "Honours ROSTER_DEVICE_SELECTOR and ROSTER_TRACE; `roster-info bench --help` for the STREAM bench."};
  app.set_version_flag("--version", std::string("roster-info ") + ROSTER_INFO_VERSION);
  app.footer(exit_status_help());
  // Usage errors end with a Fix, as every other error does (CLI11's own says
  // "Run with --help for more information."). Subcommands added below inherit it.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    std::string text = e.what();
    if (text.find("\nFix: ") != std::string::npos) return text + "\n";
    const std::string cmd = failed != nullptr && failed->get_parent() != nullptr
                                ? "roster-info " + failed->get_name() + " --help"
                                : std::string("roster-info --help");
    return text + "\nFix: see `" + cmd + "` for the options and subcommands roster-info takes\n";
  });
  // --json and --require may come after the subcommand too; each subcommand
  // applies them or refuses them (bench_command, below).
  app.fallthrough();
  command_line cl;
  add_report_options(app, cl);
  add_bench_command(app, cl);
  add_bind_command(app, cl);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help, the version and usage errors go through the checked writes.
    std::ostringstream out, err;
    const int rc = app.exit(e, out, err);
    say(out.str());
    say_error(err.str());
    return rc == 0 ? 0 : usage_error;
  }

  // One subcommand a run: `bind bench` ran the bench and dropped bind.
  if (*cl.bench_cmd && *cl.bind_cmd)
    return usage("roster-info", "bench and bind were both named, and roster-info runs one subcommand",
                 "run `roster-info bench` and `roster-info bind` as two commands");
  if (*cl.bench_cmd) return bench_command(cl);
  if (*cl.bind_cmd) {
    if (cl.bind_cmd->count("--check") > 0) {
      if (cl.check.empty())
        return usage("roster-info bind", "--check names no file",
                     "write --check FILE, or --check - to read the ranks' lines from standard input");
      return run_bind_check(cl.check, cl.json);
    }
    if (const int status = check_requirements(cl.require, nullptr); status != 0) return status;
    return run_bind(cl.pin);
  }

  const report r = gather();
  say(cl.json ? render_json(r) : render_table(r, cl.why));
  const bool written = stdout_written(cl.json ? "the JSON report" : "the report");
  return worse_status(check_requirements(cl.require, &r.backends), written ? 0 : output_failed);
}

}  // namespace

expected<std::vector<std::vector<op>>> parse_bench_shape(std::string_view shape) {
  const std::string fix =
      "write the bench's ops (copy, mul, add, triad, dot) joined by ',' within one launch and '|' where the program "
      "syncs the grid, e.g. --shape \"copy|dot\" or --shape \"copy,mul|dot\"";
  auto refuse = [&](const std::string& why) -> expected<std::vector<std::vector<op>>> {
    return make_error(errc::invalid_argument,
                      "'" + roster::env::printable(shape) + "' is not a grid-sync program shape: " + why, fix);
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
      return refuse("unknown op '" + roster::env::printable(name, 64) +
                    "' (the bench's ops: copy, mul, add, triad, dot)");
    pieces.back().push_back(*found);
    if (end == std::string_view::npos) break;
    if (shape[end] == '|') pieces.emplace_back();
    at = end + 1;
  }
  if (pieces.size() < 2) return refuse("it has no '|' (grid_sync), so native and split would run it alike");
  std::size_t steps = pieces.size() - 1;  // a grid_sync between each two pieces
  for (const auto& piece : pieces) steps += piece.size();
  if (steps > max_program_steps)
    return refuse(std::to_string(steps) + " steps, more than a program's " + std::to_string(max_program_steps));
  return pieces;
}

int run_bind(bool pin) {
  auto b = roster::bind_rank(roster::bind_options{.pin_cpus = pin});
  if (!b) {
    print_error("roster-info bind", b.error());
    return bind_failed;
  }
  say(roster::binding_record(*b) + "\n");
  return stdout_written("the binding") ? 0 : output_failed;
}

namespace {
std::string_view trim_line(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
}  // namespace

int run_bind_check(const std::string& path, bool json) {
  // At most this many bytes of records: a million ranks of about 1 KiB each.
  constexpr std::size_t limit = std::size_t{1} << 30;
  std::FILE* in = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (in == nullptr) {
    const int e = errno;
    print_error("roster-info bind --check",
                roster::error(errc::not_found, "cannot read '" + roster::env::printable(path) + "': " + std::strerror(e),
                              "name the file the ranks' `roster-info bind` lines were written to, or - for "
                              "standard input"));
    return usage_error;
  }
  std::vector<std::string> records;
  std::string line, all;
  char buf[65536];
  std::size_t got = 0, total = 0;
  while ((got = std::fread(buf, 1, sizeof buf, in)) > 0 && total <= limit) {
    all.append(buf, got);
    total += got;
  }
  const bool read_error = std::ferror(in) != 0;
  if (in != stdin) std::fclose(in);
  if (read_error || total > limit) {
    print_error("roster-info bind --check",
                roster::error(errc::invalid_argument,
                              "'" + roster::env::printable(path) + "' " +
                                  (read_error ? "could not be read to its end" : "holds more than 1 GiB"),
                              "give it the lines `roster-info bind` printed, one per rank"));
    return usage_error;
  }
  for (std::size_t at = 0; at < all.size();) {
    const auto end = std::min(all.find('\n', at), all.size());
    const std::string_view l = trim_line(std::string_view(all).substr(at, end - at));
    if (!l.empty()) records.emplace_back(l);
    at = end + 1;
  }
  auto check = roster::check_placement(records);
  if (!check) {
    print_error("roster-info bind --check", check.error());
    return usage_error;
  }
  say(json ? check->json() + "\n" : check->table());
  const bool written = stdout_written("the job check");
  return check->ok() ? (written ? 0 : output_failed) : placement_problem;
}

int main(int argc, char** argv) {
  // A closed pipe is a failed write with its reason (EPIPE), and status 4,
  // rather than death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  guard_standard_streams();
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::bad_alloc&) {
    say_error("roster-info: out of memory\nFix: free memory, or run a smaller --size\n");
    status = internal_failure;
  } catch (const std::exception& e) {
    // Nothing of roster throws; {fmt} and CLI11 may. Said, never an abort.
    print_error("roster-info", roster::error(errc::internal, std::string("stopped by an exception: ") + e.what(),
                                             "report this with the command line that caused it"));
    status = internal_failure;
  }
  return final_status(status);
}

}  // namespace roster::info
