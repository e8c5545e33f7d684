#pragma once
// roster-info's outputs named by the user (--svg FILE, --export FILE): what
// may be named, and how a path that is not a regular file is written.

#include <roster/error.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace roster::info {

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
