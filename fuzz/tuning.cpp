// Fuzzes the tuning file reader: parse_tuning on the bytes, and load_tuning on
// the same bytes written to a temporary file. A file read without error
// writes back (to_json) to text that reads back to the same text; a rejected
// file is an errc::io error (errc::unsupported for a newer version) with a
// Fix: part; the records rank adapters
// without fault.
#include <roster/roster.hpp>

#include "check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace {

std::string temp_file() {
  const char* dir = std::getenv("TMPDIR");
  std::string t = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/roster-fuzz-tuning-XXXXXX";
  const int fd = mkstemp(t.data());
  if (fd < 0) return {};
  ::close(fd);
  return t;
}

bool write_file(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = true;
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n <= 0) {
      ok = false;
      break;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  ::close(fd);
  return ok;
}

std::vector<roster::adapter_info> sample_adapters(const roster::tuning_file& file) {
  std::vector<roster::adapter_info> out;
  for (const auto& r : file.records) {
    if (out.size() == 4) break;
    roster::adapter_info a;
    a.backend = r.backend;
    a.name = r.name;
    a.driver_version = out.size() % 2 == 0 ? r.driver_version : r.driver_version + "-other";
    a.type = roster::device_type::discrete_gpu;
    out.push_back(a);
  }
  roster::adapter_info none;
  none.backend = "cpu";
  out.push_back(none);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = temp_file();
  static const bool cleanup = [] { return std::atexit([] { std::remove(path.c_str()); }) == 0; }();
  (void)cleanup;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto file = roster::parse_tuning(text);
  if (!file) {
    roster_fuzz::check_fix(file.error());
    // A corrupt file is errc::io; one a newer roster wrote ("version" above
    // this roster's) is errc::unsupported: neither read nor replaced.
    ROSTER_FUZZ_CHECK(file.error().code() == roster::errc::io || file.error().code() == roster::errc::unsupported,
                      "a rejected file is neither errc::io (corrupt) nor errc::unsupported (newer)");
  } else {
    const std::string once = roster::to_json(*file);
    auto back = roster::parse_tuning(once);
    ROSTER_FUZZ_CHECK(back.has_value(), "to_json wrote text parse_tuning rejects: %s",
                      back ? "" : back.error().message().c_str());
    ROSTER_FUZZ_CHECK(back->records.size() == file->records.size(), "records lost in the round trip");
    ROSTER_FUZZ_CHECK(roster::to_json(*back) == once, "to_json(parse(to_json(x))) != to_json(x)");
    for (const auto& r : file->records) {
      ROSTER_FUZZ_CHECK(!r.backend.empty() && !r.device.empty(), "a record without backend or device");
      for (const auto& f : r.figures) ROSTER_FUZZ_CHECK(f.gbps >= 0, "a negative or NaN figure");
    }
    auto adapters = sample_adapters(*file);
    for (const auto& a : adapters) (void)roster::find_tuning(file->records, a);
    (void)roster::order_by_tuning(adapters, file->records);
  }

  // The same bytes through the file reader: the same verdict.
  if (!path.empty() && write_file(path, text)) {
    auto loaded = roster::load_tuning(path);
    ROSTER_FUZZ_CHECK(loaded.has_value() == file.has_value() || size == 0, "load_tuning and parse_tuning disagree");
    if (!loaded) roster_fuzz::check_fix(loaded.error());
  }
  return 0;
}
