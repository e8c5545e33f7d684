#pragma once
/// Tuning records: measured STREAM figures per adapter, cached on disk, and
/// the lookups by backend, UUID and driver that acquire (native against split
/// grid sync) and the ranking (roster/ranking.hpp) use. Knows the backend
/// model and nothing above it.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/program.hpp>
#include <roster/detail/decision.hpp>

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
  double gbps = 0.0;  ///< median GB/s (10^9 bytes per second) over the reps
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
  [[nodiscard]] bool split_faster() const noexcept {
    return detail::decide({native_ns, spread}, {split_ns, spread}).change;
  }
  friend bool operator==(const sync_timing&, const sync_timing&) = default;
};

/// Returns the shape of a program for grid-sync choices: its ops in order,
/// "," between steps and "|" for each grid_sync, a call by its kernel's op
/// name: "triad|dot" for `triad; grid_sync; dot`.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string program_shape(std::span<const step> steps);
/// Returns whether a program has this shape, allocating nothing.
[[nodiscard]] ROSTER_API ROSTER_INLINE bool has_shape(std::span<const step> steps, std::string_view shape) noexcept;

/// Measured figures for one adapter, keyed by backend, device and driver.
struct tuning_record {
  std::string backend;         ///< backend id, e.g. "cuda"
  std::string device;          ///< the device UUID, or "SPEC/NAME" when the adapter has none
  std::string driver_version;  ///< the adapter's driver when measured; a change makes the record stale
  std::string spec;            ///< the spec when measured, for people reading the file
  std::string name;            ///< the adapter name, for people reading the file
  std::string measured_at;     ///< UTC time, ISO 8601
  std::uint64_t elements = 0;  ///< array length used
  std::uint32_t reps = 0;      ///< repetitions; each figure is their median
  std::vector<tuning_figure> figures;
  std::optional<double> native_sync_ns;  ///< median time of the dot program in one launch
  std::optional<double> split_sync_ns;   ///< median time of the dot program cut at its grid_sync
  std::optional<double> sync_spread;     ///< the larger relative spread of the two (detail/decision.hpp)
  std::vector<kernel_choice> kernels;    ///< measured variant choices (roster::tune_kernel); absent in older files
  std::vector<sync_timing> sync_shapes;  ///< grid-sync timings per program shape; absent in older files

  /// Returns the measured GB/s of an op and type, or nothing.
  [[nodiscard]] std::optional<double> bandwidth(roster::op o, element_type t) const noexcept {
    for (const auto& f : figures)
      if (f.op == o && f.type == t) return f.gbps;
    return std::nullopt;
  }
  /// Returns the triad GB/s (double, else float), or nothing.
  [[nodiscard]] std::optional<double> triad_bandwidth() const noexcept {
    if (auto d = bandwidth(op::triad, element_type::f64)) return d;
    return bandwidth(op::triad, element_type::f32);
  }
  /// Returns whether the split ran the dot program faster beyond the spread
  /// and the minimum gain (detail::decide), when both were measured.
  [[nodiscard]] std::optional<bool> split_faster() const noexcept {
    if (!native_sync_ns || !split_sync_ns) return std::nullopt;
    const double spread = sync_spread.value_or(0.0);
    return detail::decide({*native_sync_ns, spread}, {*split_sync_ns, spread}).change;
  }
  /// Returns whether the split runs programs of this shape faster beyond the
  /// noise, when that shape was measured (native_sync_ns and split_sync_ns
  /// are the shape "triad|dot", the one roster-info bench times).
  [[nodiscard]] std::optional<bool> split_faster_for(std::string_view shape) const noexcept {
    for (const auto& s : sync_shapes)
      if (s.shape == shape) return s.split_faster();
    if (shape == "triad|dot") return split_faster();
    return std::nullopt;
  }
  friend bool operator==(const tuning_record&, const tuning_record&) = default;
};

/// The content of a tuning file.
struct tuning_file {
  std::vector<tuning_record> records;
};

/// Returns the device key of an adapter in tuning records: its UUID string,
/// or "SPEC/NAME" when it has no UUID.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string tuning_device_key(const adapter_info& a);

/// Returns the default tuning file: $XDG_CACHE_HOME/roster/tuning.json, or
/// ~/.cache/roster/tuning.json when XDG_CACHE_HOME is unset, empty or relative.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::string> tuning_path();

/// Reads a tuning file. A missing file is an empty one; a corrupt or partial
/// file is an error (errc::io) whose Fix: says how to recover.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_file> load_tuning(const std::string& path);

/// Merges records into a tuning file: under an exclusive lock on PATH.lock
/// (waited for at most 30 s) it removes temporary files a killed writer left,
/// reads the file, replaces the records with the same
/// backend and device (under the same driver, the old record's kernel choices
/// the new one does not measure are kept, and so are its figures and grid-sync
/// timings when the new one has none, so a kernel-only record adds to a bench's), writes a temporary file in the same folder, fsyncs it,
/// and renames it over the file (keeping its mode), so readers see the old or
/// the new file whole. A file that cannot be read (permission, not a regular
/// file) is an error and is left as it is. A corrupt file is kept as
/// PATH.corrupt-TIME (its name is stored in kept_corrupt when given) and its
/// valid records are carried over.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> save_tuning(const std::string& path,
                                                                  std::span<const tuning_record> records,
                                                                  std::string* kept_corrupt = nullptr);

/// Returns the text of a tuning file holding these records.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string to_json(const tuning_file& file);
/// Parses the text of a tuning file.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_file> parse_tuning(std::string_view text);

/// How the records bear on one adapter.
struct tuning_match {
  const tuning_record* record = nullptr;  ///< the current record, or null
  const tuning_record* stale = nullptr;   ///< a record for this device with another driver, ignored
};

/// Finds the record for an adapter; one measured under another driver is stale.
[[nodiscard]] ROSTER_API ROSTER_INLINE tuning_match find_tuning(std::span<const tuning_record> records,
                                                                const adapter_info& a) noexcept;

namespace detail {
// find_tuning, saying under ROSTER_TRACE when a stale record is ignored.
[[nodiscard]] ROSTER_API ROSTER_INLINE tuning_match find_tuning_traced(std::span<const tuning_record> records,
                                                                       const adapter_info& a);
}  // namespace detail

/// Returns the records of the default tuning file, read once per process
/// (see reload_tuning). A corrupt file gives none, with a warning under
/// ROSTER_TRACE. The span stays valid until the process ends, across
/// reload_tuning() on any thread (each load is a snapshot kept alive).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const tuning_record> current_tuning();
/// Reads the default tuning file again at the next use, e.g. after a bench
/// wrote it; spans from earlier current_tuning() calls keep the old records.
ROSTER_API ROSTER_INLINE void reload_tuning();

/// Returns the kernel variant choices of an adapter's current record in the
/// default file (none without one; a record under another driver is ignored).
/// The span stays valid for the process.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const kernel_choice> kernel_choices_for(const adapter_info& a);

/// Returns the measured triad GB/s of an adapter from the default file, or nothing.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<double> triad_bandwidth(const adapter_info& a);

/// Returns whether a record says the grid-sync split runs the bench's
/// `triad; grid_sync; dot` program (shape "triad|dot") faster than the
/// adapter's native grid sync (false without a record, or without native grid
/// sync). acquire() cuts programs per shape (split_shapes_for).
[[nodiscard]] ROSTER_API ROSTER_INLINE bool prefer_split_for(const adapter_info& a);

/// Returns the program shapes a current record says the grid-sync split runs
/// faster on this adapter (none without native grid sync or a record).
/// acquire() cuts only programs of these shapes (grid_sync_split).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<std::string> split_shapes_for(const adapter_info& a);

/// Orders adapters: within one device type, higher measured triad bandwidth
/// first; adapters without a current record keep their place relative to each
/// other and follow measured ones of their type. Returns whether a record
/// changed the order; says why under ROSTER_TRACE.
ROSTER_API ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters,
                                              std::span<const tuning_record> records);
/// Orders adapters by the default tuning file (see the overload with records).
ROSTER_API ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters);

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/tuning-inl.hpp>
#endif
