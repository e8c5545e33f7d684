#pragma once
/// Tuning records, the store: where tuning files live, their locked
/// read-merge-write, and the records a process has in use. The records are
/// read when something asks for them (the decision, roster-info, the
/// application through use_tuning), never as a side effect of opening a
/// device: roster::acquire takes them through its options.

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/tuning/format.hpp>
#include <roster/tuning/record.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace roster {

/// Returns the default tuning file, the one benches write: $XDG_CACHE_HOME/roster/tuning.json,
/// or ~/.cache/roster/tuning.json when XDG_CACHE_HOME is unset, empty or relative
/// (tuning_path_warnings says so). A relative HOME is not used either: with no
/// absolute folder the error names what was wrong with each variable.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::string> tuning_path();

/// Returns the tuning files read, in order: ROSTER_TUNING_PATH's (':'-separated
/// absolute paths, a leading "~/" read as $HOME; typically a read-only site file
/// shared by identical nodes first), then tuning_path() when it is not among
/// them. For a device the first record that names its UUID wins, else the
/// first that names its model (find_tuning). An entry that is not an absolute
/// path is skipped, with a warning under ROSTER_TRACE; the others are kept.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::vector<std::string>> tuning_paths();
/// Returns what is wrong with ROSTER_TUNING_PATH, each with its Fix: an entry
/// skipped (not an absolute path, "~/" without HOME), a file it names that
/// does not exist; and a relative XDG_CACHE_HOME, which is ignored. Empty
/// when nothing is (roster-info reports these).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<error> tuning_path_warnings();

/// How decisions use measurements (ROSTER_TUNING).
enum class tuning_mode : std::uint8_t {
  read,     ///< the recorded figures decide (the default); nothing is measured unasked
  measure,  ///< adapters the decision weighs and no record covers are measured briefly first, and recorded
  off,      ///< records are not read: backend rank and type alone decide
};
/// Returns ROSTER_TUNING: read (default), measure or off; another word is an error.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_mode> tuning_mode_from_env();

/// Reads a tuning file. A missing file is an empty one; a corrupt or partial
/// file is an error (errc::io) whose Fix: says how to recover; what it left
/// out (tuning_file::warnings) names the file. A file of a newer format
/// version is errc::unsupported (written by a newer roster: nothing is read
/// from it). Running out of memory is an error (errc::out_of_memory), never
/// an abort. A file larger than 64 MiB is an error by its size, before
/// anything is read.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_file> load_tuning(const std::string& path);

/// Merges records into a tuning file: under an exclusive lock on TARGET.lock,
/// beside the file PATH's link chain ends at (so saves through two links to
/// one file take one lock; waited for at most 30 s), it reads the file, replaces the records with the
/// same backend and device (under the same driver, the old record's kernel
/// choices and grid-sync shapes the new one does not measure are kept, and so
/// are its figures when the new one has none, so a kernel-only record adds to
/// a bench's), writes a temporary file in the same folder, fsyncs it, and
/// renames it over the file (keeping its mode), so readers see the old or the
/// new file whole. A file that cannot be read (permission, not a regular
/// file) is an error and is left as it is. A corrupt file is kept as
/// PATH.corrupt-TIME (its name is stored in kept_corrupt when given) and its
/// valid records are carried over. A file of a newer format version is
/// neither replaced nor set aside: errc::unsupported, nothing written. A path
/// that is not a regular file, or whose link chain passes through /dev or
/// /proc (/dev/stdout), is refused before a lock file is made. A figure not above 0 or beyond
/// tuning_max_gbps is not recorded: each such is a warning, added to
/// `warnings` when given (and traced). A file that would hold more than
/// tuning_record_limit records is an error and is left as it is. A record
/// the reader would refuse (detail::record_fault: an empty backend, a spread
/// outside [0, 100), ...) is an errc::invalid_argument error, and nothing is
/// written.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> save_tuning(const std::string& path,
                                                                  std::span<const tuning_record> records,
                                                                  std::string* kept_corrupt = nullptr,
                                                                  std::vector<error>* warnings = nullptr);

/// Returns the records of the tuning files (tuning_paths(), in order), read at
/// the first call (and again after reload_tuning), or the records handed over
/// with use_tuning. A corrupt file gives none, with a warning under ROSTER_TRACE.
/// The span stays valid for the process (each load is a snapshot kept alive).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const tuning_record> current_tuning();
/// Returns the records in use without reading anything: those current_tuning
/// read or use_tuning handed over; empty before either. Devices the cache
/// opens (roster::get_device, circuits) get these.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const tuning_record> tuning_in_use() noexcept;
/// Hands the process its records (a copy), in place of the default file's.
ROSTER_API ROSTER_INLINE void use_tuning(tuning_file records);
/// Reads the default tuning file again at the next current_tuning(), e.g.
/// after a bench wrote it; spans from earlier calls keep the old records.
ROSTER_API ROSTER_INLINE void reload_tuning();

/// Returns the kernel variant choices of an adapter's current record in
/// current_tuning() (none without one; a record under another driver is ignored).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::span<const kernel_choice> kernel_choices_for(const adapter_info& a);
/// Returns the measured triad GB/s of an adapter in current_tuning(), or nothing.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<double> triad_bandwidth(const adapter_info& a);
/// Returns the program shapes current_tuning() says the grid-sync split runs
/// faster on this adapter (roster::split_shapes).
[[nodiscard]] ROSTER_API ROSTER_INLINE std::vector<std::string> split_shapes_for(const adapter_info& a);
/// Orders adapters by current_tuning() (see the overload with records).
ROSTER_API ROSTER_INLINE bool order_by_tuning(std::span<adapter_info> adapters);

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/store/store-inl.hpp>
#endif
