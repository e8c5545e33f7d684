#pragma once
/// Tuning records, the file format: records to and from the JSON text of a
/// tuning file ("format": "roster-tuning", "version": 2; version 1 files are
/// still read). Knows the record model and nothing of where files are kept
/// (tuning/store.hpp).

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/tuning/record.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// The most records read from one tuning file; those past it are left out,
/// with a warning (tuning_file::warnings), and a save refuses to add more.
inline constexpr std::size_t tuning_record_limit = 10'000;
/// The most memory one record may take while it is read (about 1 MiB: some
/// thousand kernel choices); a larger one is not valid.
inline constexpr std::size_t tuning_record_bytes = std::size_t{1} << 20;

/// Returns the text of a tuning file holding these records. Text that is not
/// UTF-8 (a device key of other bytes) is written as \udcNN escapes, which
/// parse_tuning reads back as the same bytes.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string to_json(const tuning_file& file);
/// Parses the text of a tuning file (version 2, or 1). A corrupt or partial
/// text (a key twice in one object included) is an error (errc::io) whose
/// Fix: says how to recover; a newer version is errc::unsupported. Memory follows
/// the records kept, not the text: values the format does not know are
/// checked and skipped without being built, at most tuning_record_limit
/// records are kept, and running out of memory is an error, never an abort.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_file> parse_tuning(std::string_view text);

namespace detail {
// Parses a tuning file; with salvage, a record that is not valid is skipped
// instead of failing the whole file (what a corrupt file carries over).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_file> parse_tuning_records(std::string_view text,
                                                                                  bool salvage);
// Returns why a record's values could not be read back from a tuning file
// (an empty backend or device, an op the format has no name for, a figure
// twice, a spread outside [0, 100), a timing that is not a finite number
// above 0), or empty. The reader applies it to every record it builds and
// save_tuning to every record it is given: roster writes nothing it would
// refuse to read.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string record_fault(const tuning_record& r);
// Removes a record's figures that are not above 0 or are beyond
// tuning_max_gbps, adding a warning for each to `warnings`.
ROSTER_API ROSTER_INLINE void drop_implausible_figures(tuning_record& r, std::string_view where,
                                                       std::vector<error>& warnings);
}  // namespace detail

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/tuning/format-inl.hpp>
#endif
