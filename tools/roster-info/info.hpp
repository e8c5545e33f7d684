#pragma once
// roster-info: what the node has (report) and what it measures (bench).

#include <roster/backend.hpp>
#include <roster/circuits.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/native.hpp>
#include <roster/noise_rule.hpp>
#include <roster/tuning.hpp>
#include <roster/variants.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster::info {

/// One exit status of roster-info and when it is given; docs/roster-info.md
/// has the same table (the tools suite compares the two) and --help prints it.
struct exit_status {
  int code;
  std::string_view when;
};

/// Exit status when roster-info itself failed (out of memory, an exception).
inline constexpr int internal_failure = 1;
/// Exit status of a usage error.
inline constexpr int usage_error = 2;
/// Exit status when a --require'd backend is missing or does not open.
inline constexpr int require_failed = 3;
/// Exit status when output that was asked for was not written.
inline constexpr int output_failed = 4;
/// Exit status when `bench` found a wrong result (nothing recorded for that adapter).
inline constexpr int wrong_result = 5;
/// Exit status when `bind` could not bind this rank.
inline constexpr int bind_failed = 6;
/// Exit status when `bench` measured nothing on an adapter it was asked to measure.
inline constexpr int nothing_measured = 7;
/// Exit status when `bind --check` found a problem in the job's placement.
inline constexpr int placement_problem = 8;

/// Every exit status, in order. When more than one applies, the lowest is
/// given, except output_failed, which is given only when nothing else failed.
inline constexpr exit_status exit_statuses[] = {
    {0, "the command did what was asked: the report was printed (a backend that does not open is not a failure), "
        "every adapter the bench was asked for was measured, or this rank was bound"},
    {internal_failure, "roster-info itself failed (out of memory, an exception it did not expect); stderr says "
                       "what, with a `Fix:`"},
    {usage_error, "a usage error: unknown option, missing value, bad `--size`/`--reps`/`--shape`, malformed or "
                  "unknown `--adapter`, `--json` with `bench`, `bench` and `bind` both named, a malformed "
                  "`ROSTER_DEVICE_SELECTOR` for `bench`; nothing runs"},
    {require_failed, "`--require BACKEND` (repeatable, case-insensitive) named a backend that is not built or does "
                     "not open: the report is still printed, `bench` and `bind` do not run, and stderr says why, "
                     "with a `Fix:`"},
    {output_failed, "output could not be written: standard output (a full disk, a closed pipe or stream), an "
                    "`--svg` or `--export` file, the tuning records `bench` measured, or standard error when there "
                    "was a warning or an error to say"},
    {wrong_result, "`bench` found a wrong result (nothing recorded for that adapter)"},
    {bind_failed, "`bind` could not bind this rank (no circuit, strict mode unmet, a broken launcher environment)"},
    {nothing_measured, "`bench` measured nothing on an adapter it was asked for (it did not open, its buffers could "
                       "not be allocated, every figure failed), or found no adapter to measure; stderr says why, "
                       "with a `Fix:`"},
    {placement_problem, "`bind --check` found a problem in the job's placement (ranks sharing a device while "
                        "another idles, ranks far from their device, nodes whose pools differ, a record it could "
                        "not read): the table (or `--json`) says which"},
};

/// Returns the status to exit with when both apply (see exit_statuses).
constexpr int worse_status(int a, int b) noexcept {
  if (a == 0 || a == output_failed) return b == 0 ? a : b;
  if (b == 0 || b == output_failed) return a;
  return a < b ? a : b;
}

/// Puts /dev/null in place of a closed standard stream, so no file roster
/// opens takes its number, and counts a closed output stream as failed.
void guard_standard_streams();
/// Writes text to standard output; never throws. A failed write is
/// remembered, and stdout_written reports it.
void say(std::string_view text);
/// Flushes standard output (a progress line); never throws. A failed flush
/// is remembered.
void flush_out();
/// Writes text to standard error and flushes it; never throws. A failed
/// write is remembered (see stderr_failed).
void say_error(std::string_view text);
/// Returns whether a write to standard error failed.
bool stderr_failed() noexcept;
/// Flushes standard output; false, with the reason on standard error, when
/// some of what was printed as `what` did not reach it.
bool stdout_written(std::string_view what);
/// Returns status, or output_failed when it is 0 and a write to standard
/// output or standard error failed.
int final_status(int status);

/// One registered backend as this host sees it.
struct backend_row {
  std::string id;
  int rank = unranked;
  bool dispatches = true;
  bool opened = false;                 ///< adapter 0 opened
  std::size_t adapters = 0;            ///< adapters it enumerated
  std::optional<roster::error> error;  ///< why it did not open
};

/// One adapter, with what the selector and tuning records say about it.
struct adapter_row {
  adapter_info info;
  bool selected = true;                ///< kept by ROSTER_DEVICE_SELECTOR
  std::string selector_reason;         ///< why it was dropped
  std::optional<double> triad_gbps;    ///< from a current tuning record
  bool stale_record = false;           ///< a record exists, but for another driver
  std::vector<sync_timing> sync_shapes;  ///< grid-sync timings per program shape from a current record
};

/// One circuit with its role.
struct circuit_row {
  std::size_t index = 0;
  std::string role;                    ///< "primary", "auxiliary" or ""
  std::string preferred;               ///< spec of the preferred adapter
  std::string preferred_because;       ///< why it is preferred (measurements, the software rule, rank)
  std::vector<std::string> adapters;   ///< every adapter spec, preferred first
  std::string name;
  std::string type;
  std::string identity;
  std::optional<double> score;
  std::optional<device_occupancy> occupancy;  ///< where NVML answers
};

/// What roster::decide() chose for one role, and why.
struct decision_row {
  std::string role;                    ///< "primary" or "auxiliary"
  std::string adapter;                 ///< the spec chosen; empty when the decision failed
  std::vector<std::string> reasons;    ///< each part of the decision
  std::optional<roster::error> error;  ///< why there is none
};

/// Everything roster-info prints without a subcommand.
struct report {
  std::string version;
  inventory_stats inventory;           ///< of backend_registration
  std::vector<backend_row> backends;
  std::vector<adapter_row> adapters;   ///< those the vendor masks leave visible
  std::vector<std::string> hidden;     ///< "spec (why)" of each adapter a vendor mask hides
  std::vector<circuit_row> circuits;
  std::vector<decision_row> decisions; ///< primary, then auxiliary
  std::string selector;                ///< ROSTER_DEVICE_SELECTOR as set
  std::string requirement;             ///< ROSTER_REQUIRE as set
  bool requirement_holds = true;       ///< some circuit satisfies it
  bool requirement_valid = true;       ///< it parses (a word that is empty or unknown does not)
  std::string tuning_path;
  std::size_t tuning_records = 0;
  std::vector<roster::error> warnings; ///< selector, tuning file, enumeration problems
};

/// Collects the report (opens adapter 0 of each dispatching backend).
report gather();
/// Returns the readable table.
std::string render_table(const report& r, bool why = false);
/// Returns the JSON document described by roster-info.schema.json, as text
/// (roster's own JSON writer, detail/base/json.hpp: every string valid UTF-8,
/// each byte that is not written as the text \xNN).
std::string render_json(const report& r);

/// Prints an error to stderr as "CONTEXT: WHAT" and "Fix: FIX" lines, from its parts.
void print_error(std::string_view context, const roster::error& e);
/// Returns text from outside roster on one line: C0 and C1 control bytes and
/// DEL as \n, \xNN; past limit bytes cut, with the size said. A backslash
/// is left alone, so text the library escaped is not escaped twice.
std::string one_line(std::string_view s, std::size_t limit);
/// Returns an error's message with its what and its Fix one line each.
std::string one_line_message(const roster::error& e);
/// Prints a warning to stderr: a blank line, "warning: WHAT" and "Fix: FIX".
void print_warning(const roster::error& e);

/// The ops and element types the bench times, in the order of its table.
inline constexpr op bench_ops[] = {op::copy, op::mul, op::add, op::triad, op::dot};
inline constexpr element_type bench_types[] = {element_type::f32, element_type::f64};

/// The shape the bench times when none is named: `triad; grid_sync; dot`.
inline constexpr std::string_view default_bench_shape = "triad|dot";

/// Parses a program shape for the grid-sync comparison (roster::program_shape
/// form, "copy|dot"): the bench's ops (copy, mul, add, triad, dot) joined by
/// "," within one launch and "|" for a grid_sync; returns the ops between
/// grid_syncs. An unknown op, an empty piece or a shape without "|" is an
/// error (errc::invalid_argument) with a Fix.
expected<std::vector<std::vector<op>>> parse_bench_shape(std::string_view shape);

/// What `roster-info bench` measures.
struct bench_options {
  std::vector<std::string> adapters;   ///< specs; empty: every selected adapter
  std::uint64_t size = std::uint64_t{1} << 24;
  unsigned reps = 10;
  bool progress = false;               ///< a progress bar (stdout is a terminal)
  bool save = true;                    ///< write tuning records
  bool kernels = true;                 ///< time the variants of registered kernels (roster::tune_kernel)
  std::string svg;                     ///< file for the bar chart, or empty
  std::string export_path;             ///< --export: also write the records, keyed by model, into this site file
  std::vector<std::string> shapes{std::string(default_bench_shape)};  ///< program shapes timed native and split
  std::vector<std::string> require;    ///< --require: checked once the command line is, before anything runs
};

/// One program shape timed in one launch and cut at its grid_syncs.
struct shape_result {
  std::string shape;
  std::optional<double> native_ns;     ///< median in one launch
  std::optional<double> split_ns;      ///< median cut at the grid_syncs
  roster::noise_rule::outcome decision;  ///< split against native (roster/noise_rule.hpp)
  bool wrong = false;                  ///< a result differed from the reference: not recorded
};

/// The figures of one adapter.
struct bench_result {
  std::string spec;
  adapter_info info;
  std::vector<tuning_figure> figures;
  std::vector<shape_result> shapes;    ///< each --shape, where the adapter has native grid sync
  std::vector<roster::error> errors;   ///< what could not be measured
  bool wrong = false;                  ///< a result differed from the reference: no record
  bool wrong_kernel = false;           ///< a kernel variant was refused (never chosen; the rest recorded)
  bool contended = false;              ///< the host's cores were busy: the figures are the load's, no record
  std::vector<kernel_tuning> kernels;  ///< each kernel op with several variants, timed and checked
  std::optional<code_load> load;       ///< how the built-in kernels were loaded, where the backend says
};

/// Returns why a --require'd backend (named as typed) is not met, or nothing;
/// `row` is that backend's row of the report, null when none is registered.
std::optional<roster::error> requirement_error(std::string_view want, const backend_row* row);
/// Returns the row of a registered backend by id, adapter 0 opened as the
/// report opens it; nothing when no backend has that id.
std::optional<backend_row> backend_row_of(std::string_view id);
/// Checks each --require'd backend (registered, adapter 0 opens), from the
/// report's rows when given, else opening each; prints why one is not met
/// and returns require_failed, or 0.
int check_requirements(const std::vector<std::string>& require, const std::vector<backend_row>* rows);

/// Runs `roster-info bind`: prints this rank's binding as one JSON line; returns the exit status.
int run_bind(bool pin);
/// Reads binding records (one JSON line per rank, `-` for standard input),
/// checks the job's placement and prints it; returns the exit status.
int run_bind_check(const std::string& path, bool json);
/// Runs `roster-info bench`; returns the exit status.
int run_bench(const bench_options& options);
/// Holds the tuning file's measure lock for a bench that records (nothing
/// for --no-save), so processes recording into one file measure one at a
/// time; says so when another process kept it past the wait.
std::shared_ptr<const void> measure_alone(const bench_options& options);
/// Says why an adapter's triad figure, measured on arrays of `elements`, is
/// the machine's load, not the adapter's (roster::contended_triad on its
/// double, else any, triad).
std::optional<roster::error> contended(const bench_result& result, std::uint64_t elements);
/// Writes the tuning record of each adapter with figures and no wrong result
/// into the tuning file and says so; returns false, said, when it could not.
bool save_bench_records(const std::vector<bench_result>& results, const bench_options& options);
/// Writes the same records keyed by device model (tuning_model_key) into
/// options.export_path, a site file for ROSTER_TUNING_PATH; returns false,
/// said, when that fails.
bool export_bench_records(const std::vector<bench_result>& results, const bench_options& options);
/// Returns the tables of bench results: GB/s per op and type, grid sync per
/// program shape, kernel variants (the last two where there are any).
std::string render_tables(const std::vector<bench_result>& results, const bench_options& options);
/// Returns the SVG bar chart of bench results.
std::string render_svg(const std::vector<bench_result>& results, const bench_options& options);

/// Returns the first 8 hex digits of a UUID as "GPU-xxxxxxxx", or "-".
std::string short_uuid(const adapter_info& a);
/// Returns a byte count as "141.0 GiB", or "-" for 0.
std::string memory_text(std::uint64_t bytes);
/// Returns a duration in ns as "12.3 us" / "4.56 ms".
std::string duration_text(double ns);

/// Runs roster-info with its command line; returns the exit status.
int main(int argc, char** argv);

}  // namespace roster::info
