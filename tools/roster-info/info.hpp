#pragma once
// roster-info: what the node has (report) and what it measures (bench).

#include <roster/backend.hpp>
#include <roster/circuits.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/tuning.hpp>
#include <roster/variants.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster::info {

/// Exit status of a usage error.
inline constexpr int usage_error = 2;
/// Exit status when a --require'd backend is missing or does not open.
inline constexpr int require_failed = 3;
/// Exit status when `bench` found a wrong result (nothing recorded for that adapter).
inline constexpr int wrong_result = 5;
/// Exit status when `bind` could not bind this rank.
inline constexpr int bind_failed = 6;
/// Exit status when output that was asked for was not written (a full disk,
/// a closed pipe, an unwritable --svg file).
inline constexpr int output_failed = 4;

/// Flushes standard output; false, with the reason on standard error, when
/// some of what was printed as `what` did not reach it.
bool stdout_written(std::string_view what);
/// Returns text with each byte that is not part of valid UTF-8 written as
/// \xNN, so JSON can hold it and still show what the bytes were.
std::string valid_utf8(std::string_view text);
/// Makes every string (and key) in a JSON value valid UTF-8 (see valid_utf8).
void make_valid_utf8(nlohmann::json& value);

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
  std::vector<std::string> adapters;   ///< every adapter spec, preferred first
  std::string name;
  std::string type;
  std::string identity;
  std::optional<double> score;
  std::optional<device_occupancy> occupancy;  ///< where NVML answers
};

/// Everything roster-info prints without a subcommand.
struct report {
  std::string version;
  inventory_stats inventory;           ///< of backend_registration
  std::vector<backend_row> backends;
  std::vector<adapter_row> adapters;
  std::vector<circuit_row> circuits;
  std::string selector;                ///< ROSTER_DEVICE_SELECTOR as set
  std::string requirement;             ///< ROSTER_REQUIRE as set
  bool requirement_holds = true;       ///< some circuit satisfies it
  std::string tuning_path;
  std::size_t tuning_records = 0;
  std::vector<roster::error> warnings; ///< selector, tuning file, enumeration problems
};

/// Collects the report (opens adapter 0 of each dispatching backend).
report gather();
/// Returns the readable table.
std::string render_table(const report& r);
/// Returns the JSON document described by roster-info.schema.json.
nlohmann::json render_json(const report& r);
/// Returns an error as JSON {code, message, what, fix}.
nlohmann::json error_json(const roster::error& e);

/// Prints an error to stderr as "CONTEXT: WHAT" and "Fix: FIX" lines, from its parts.
void print_error(std::string_view context, const roster::error& e);

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
  std::vector<std::string> shapes{std::string(default_bench_shape)};  ///< program shapes timed native and split
};

/// One program shape timed in one launch and cut at its grid_syncs.
struct shape_result {
  std::string shape;
  std::optional<double> native_ns;     ///< median in one launch
  std::optional<double> split_ns;      ///< median cut at the grid_syncs
  roster::detail::decision decision;   ///< split against native (detail/decision.hpp)
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
  std::vector<kernel_tuning> kernels;  ///< each kernel op with several variants, timed and checked
};

/// Runs `roster-info bind`: prints this rank's binding as one JSON line; returns the exit status.
int run_bind(bool pin);
/// Runs `roster-info bench`; returns the exit status.
int run_bench(const bench_options& options);
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
