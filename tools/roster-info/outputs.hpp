#pragma once
// roster-info's outputs named by the user (--svg FILE, --export FILE): what
// may be named, and how a path that is not a regular file is written.

#include <roster/error.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace roster::info {

/// Returns the error for an output option (--svg, --export) that names a
/// file roster keeps records in: the user's tuning file, a ROSTER_TUNING_PATH
/// file (for --svg; --export is how site files are written), or the lock
/// file of either. Compared by device and inode, else by resolved path.
/// Nothing when the path names none of them.
std::optional<roster::error> names_a_tuning_file(std::string_view option, const std::string& path);

/// Writes text to an output the user named that is a stream, not a file to
/// replace: a descriptor of this process (/dev/stdout, /dev/fd/N, a link to
/// one) is written where it stands (a log opened with >> gets the text
/// appended), a FIFO with a reader, a terminal or a character device is
/// opened and written; never renamed over, never locked beside. A FIFO
/// that no process reads, a block device, and a regular file under /dev or
/// /proc are refused. Nothing when path is a regular file elsewhere (or
/// missing, or a folder): the caller writes it as a file.
std::optional<roster::expected<void>> write_stream_output(const std::string& path, std::string_view text,
                                                          std::string_view label);

}  // namespace roster::info
