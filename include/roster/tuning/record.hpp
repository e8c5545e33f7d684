#pragma once
/// Tuning records, the model: measured STREAM figures, grid-sync timings and
/// kernel variant choices for one adapter, keyed by backend, device and
/// driver, and the lookups that match them to an adapter. Knows the backend
/// model and nothing of files (tuning/format.hpp) or where they are kept
/// (tuning/store.hpp), so roster::acquire can take records through its
/// options without reading anything.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/kernels.hpp>
#include <roster/program.hpp>
#include <roster/noise_rule.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// One measured bandwidth: an op on one element type.
struct tuning_figure {
  roster::op op = op::triad;
  element_type type = element_type::f64;
  double gbps = 0.0;    ///< median GB/s (10^9 bytes per second) over the reps
  double spread = 0.0;  ///< the reps' interquartile range over their median (0 when not recorded)
  /// The relative half width of the median's 95% confidence interval
  /// (noise_rule::median_confidence), in a record measured interleaved; 0 otherwise.
  double bound = 0.0;
  friend bool operator==(const tuning_figure&, const tuning_figure&) = default;
};

/// Grid-sync timings of one program shape: the program in one launch against
/// the same program through the grid-sync split.
struct sync_timing {
  std::string shape;        ///< roster::program_shape of the program, e.g. "triad|dot"
  double native_ns = 0.0;   ///< median time in one launch
  double split_ns = 0.0;    ///< median time cut at its grid_syncs
  double spread = 0.0;      ///< the larger relative spread of the two
  /// Returns whether the split is faster beyond the spread and the minimum gain.
  [[nodiscard]] ROSTER_API ROSTER_INLINE bool split_faster() const noexcept;
  friend bool operator==(const sync_timing&, const sync_timing&) = default;
};

/// Measured figures for one adapter, keyed by backend, device and driver.
struct tuning_record {
  std::string backend;         ///< backend id, e.g. "cuda"
  /// The device UUID, or "SPEC/NAME" when the adapter has none; or
  /// "model:NAME" for a record that stands for every device of that model
  /// (a site file shared by identical nodes, `roster-info bench --export`).
  std::string device;
  std::string driver_version;  ///< the adapter's driver when measured; a change makes the record stale
  std::string spec;            ///< the spec when measured, for people reading the file
  std::string name;            ///< the adapter name, for people reading the file
  std::string measured_at;     ///< UTC time, ISO 8601
  std::uint64_t elements = 0;  ///< array length used
  std::uint32_t reps = 0;      ///< repetitions; each figure is their median
  /// Measured in one window with the other adapters of its circuit, round by
  /// round (A B A B ...), so drift touches them alike; false: in a window of its own.
  bool interleaved = false;
  /// The standing preference of its circuit: when measured, this adapter came
  /// first by record, and the decision keeps it first inside its selector
  /// term until another's record beats it beyond the margin (hysteresis: a
  /// re-measure inside the noise changes nothing).
  bool leads = false;
  std::vector<tuning_figure> figures;
  std::vector<kernel_choice> kernels;    ///< measured variant choices (roster::tune_kernel)
  std::vector<sync_timing> sync_shapes;  ///< grid-sync timings per program shape

  /// Returns the measured GB/s of an op and type, or nothing.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<double> bandwidth(roster::op o,
                                                                       element_type t) const noexcept;
  /// Returns the figure of an op and type, or null.
  [[nodiscard]] ROSTER_API ROSTER_INLINE const tuning_figure* figure(roster::op o, element_type t) const noexcept;
  /// Returns the triad GB/s (double, else float), or nothing.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<double> triad_bandwidth() const noexcept;
  /// Returns whether the split runs programs of this shape faster beyond the
  /// noise (detail::decide), when that shape was measured.
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<bool> split_faster_for(std::string_view shape) const noexcept;
  friend bool operator==(const tuning_record&, const tuning_record&) = default;
};

/// The most GB/s a recorded figure may claim: beyond any memory's bandwidth
/// (an H200's HBM3e is 4,800; a large node's caches together stay well under
/// this). A figure above it, or not above 0, is a timing fault, not a
/// measurement: it is not read and not recorded.
inline constexpr double tuning_max_gbps = 100'000.0;

/// The records of a tuning file.
struct tuning_file {
  std::vector<tuning_record> records;
  /// What reading the file left out, each an error with its Fix (records past
  /// tuning_record_limit, figures beyond tuning_max_gbps); never written back.
  std::vector<error> warnings;
  std::size_t records_left_out = 0;  ///< records past tuning_record_limit, not read
};

/// Returns the device key of an adapter in tuning records: its UUID string,
/// or "SPEC/NAME" when it has no UUID.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string tuning_device_key(const adapter_info& a);
/// Returns the key of a record for every device of this adapter's model: "model:NAME".
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string tuning_model_key(const adapter_info& a);

/// How the records bear on one adapter.
struct tuning_match {
  const tuning_record* record = nullptr;  ///< the current record, or null
  const tuning_record* stale = nullptr;   ///< a record for this device with another driver, ignored
  bool by_model = false;                  ///< the record stands for the adapter's model, not its UUID
};

/// Finds the record for an adapter: the first that names its device (UUID),
/// else the first that names its model ("model:NAME"), each under the same
/// backend and driver; one measured under another driver is stale.
[[nodiscard]] ROSTER_API ROSTER_INLINE tuning_match find_tuning(std::span<const tuning_record> records,
                                                                const adapter_info& a) noexcept;

/// Returns the program shapes a record says the grid-sync split runs faster
/// (none without native grid sync or a record). roster::acquire cuts only
/// programs of these shapes (grid_sync_split).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<std::string> split_shapes(const tuning_record* record,
                                                                             const adapter_info& a);

/// Compares two adapters' records for work over `ops` and `type` (triad when
/// `ops` holds no measured op): the time per byte summed over the ops, and
/// the decision rule of roster/noise_rule.hpp. Two records measured alike,
/// interleaved over arrays of one size, need a gain beyond the minimum (3%)
/// plus both medians' confidence bounds; two measured each in its own window,
/// beyond the larger spread and the minimum; records measured differently
/// (one interleaved and one not, or arrays more than twice apart), beyond
/// the larger spread and twice the minimum. Returns > 0 when `candidate` is faster beyond the noise, < 0
/// when `current` is, 0 when neither (or a figure is missing).
[[nodiscard]] ROSTER_API ROSTER_INLINE int compare_records(const tuning_record& current,
                                                           const tuning_record& candidate, op_set ops,
                                                           element_type type) noexcept;

/// Orders adapters: within one device type, higher measured triad bandwidth
/// first; adapters without a current record keep their place relative to each
/// other and follow measured ones of their type. Returns whether a record
/// changed the order; says why under ROSTER_TRACE.
ROSTER_API ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters,
                                              std::span<const tuning_record> records);

namespace detail {
// Returns whether two device keys name one device. Records written before a
// UUID took the form its source uses carry "GPU-" on every UUID (a CPU's and
// lavapipe's too): the key with and without it is the same device.
inline bool same_device_key(std::string_view x, std::string_view y) noexcept {
  const auto bare = [](std::string_view k) {
    return k.size() == 40 && k.starts_with("GPU-") && k[12] == '-' ? k.substr(4) : k;
  };
  return x == y || bare(x) == bare(y);
}

// find_tuning, saying under ROSTER_TRACE when a stale record is ignored.
[[nodiscard]] ROSTER_API ROSTER_INLINE tuning_match find_tuning_traced(std::span<const tuning_record> records,
                                                                       const adapter_info& a);
}  // namespace detail

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/tuning/record-inl.hpp>
#endif
