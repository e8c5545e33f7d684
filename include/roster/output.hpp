#pragma once
/// Outputs a user names (a chart, an exported tuning file, a report): what
/// may be named, and how each kind of path is written. roster-info writes
/// its --svg and --export through these, and a code that writes roster's
/// figures where its user says gets the same care:
///   - a descriptor of this process (/dev/stdout, /dev/fd/N, a link to one)
///     is written where it stands, so a log opened with >> is appended to;
///   - a FIFO with a reader, a terminal or a character device is written as
///     the stream it is: never renamed over, never locked beside;
///   - a FIFO no process reads, a block device and a file under /dev or
///     /proc are refused, with a Fix;
///   - roster's own tuning files and their locks are refused, so an output
///     never lands where the records are.

#include <roster/config.hpp>
#include <roster/error.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace roster {

/// Returns the error for an output option (`option`, e.g. "--svg") whose
/// path names a file roster keeps records in: the user's tuning file, a
/// ROSTER_TUNING_PATH file (unless `site_files_allowed`: writing a site file
/// is what an export is for), or the lock of either. Compared by device and
/// inode, else by resolved path. Nothing when the path names none of them.
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<error> refuse_tuning_file_output(std::string_view option,
                                                                                      const std::string& path,
                                                                                      bool site_files_allowed);

/// Writes text to an output that is a stream, not a file to replace (see
/// above), and returns what happened; nothing when path is a regular file
/// outside /dev and /proc (or missing, or a folder): the caller writes it as
/// a file. `label` names the output in messages ("the chart").
[[nodiscard]] ROSTER_API ROSTER_INLINE std::optional<expected<void>> write_stream_output(const std::string& path,
                                                                                        std::string_view text,
                                                                                        std::string_view label);

/// Writes text to an output the user named: a stream as write_stream_output
/// writes it, else the file created or truncated (a link to nowhere, a FIFO
/// or a device refused). `place_fix` is the Fix when the folder cannot be
/// written ("name a file in a folder you may write to").
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<void> write_output(const std::string& path, std::string_view text,
                                                                   std::string_view label,
                                                                   std::string_view place_fix);

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/store/output-inl.hpp>
#endif
