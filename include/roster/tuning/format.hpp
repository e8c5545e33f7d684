#pragma once
/// Tuning records, the file format: records to and from the JSON text of a
/// tuning file ("format": "roster-tuning", "version": 2; version 1 files are
/// still read). Knows the record model and nothing of where files are kept
/// (tuning/store.hpp).

#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/tuning/record.hpp>

#include <string>
#include <string_view>

namespace roster {

/// Returns the text of a tuning file holding these records.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::string to_json(const tuning_file& file);
/// Parses the text of a tuning file (version 2, or 1). A corrupt or partial
/// text is an error (errc::io) whose Fix: says how to recover.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_file> parse_tuning(std::string_view text);

namespace detail {
// Parses a tuning file; with salvage, a record that is not valid is skipped
// instead of failing the whole file (what a corrupt file carries over).
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<tuning_file> parse_tuning_records(std::string_view text,
                                                                                  bool salvage);
}  // namespace detail

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/tuning/format-inl.hpp>
#endif
