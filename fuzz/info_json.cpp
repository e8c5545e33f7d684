// Fuzzes roster-info's JSON writer (roster's own, detail/base/json.hpp): a report
// whose every text (selector, paths, names, messages) comes from the input,
// bytes that are not UTF-8 included, renders to JSON that nlohmann-json, an
// independent and strict parser, reads back; each text that was valid UTF-8
// is kept as it was, and each byte that was not reads as the text \xNN. The
// table renders too.
#include "info.hpp"

#include "check.hpp"

#include <roster/detail/base/json.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

// The input's texts: split at NUL bytes, always at least 8 (empty ones padded).
std::vector<std::string> texts_of(std::string_view in) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= in.size();) {
    std::size_t nul = in.find('\0', at);
    if (nul == std::string_view::npos) nul = in.size();
    out.emplace_back(in.substr(at, nul - at));
    at = nul + 1;
  }
  while (out.size() < 8) out.emplace_back();
  return out;
}

// The text as the report must show it: valid UTF-8 kept, every other byte
// written as the four characters \xNN.
std::string shown(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t n = roster::detail::utf8_length(s, i); n > 0) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(s[i++])));
    out += buf;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using nlohmann::json;
  const auto t = texts_of(std::string_view(reinterpret_cast<const char*>(data), size));
  roster::info::report r;
  r.version = t[0];
  r.selector = t[1];
  r.tuning_path = t[2];
  roster::info::backend_row b;
  b.id = t[3];
  b.error = roster::error(roster::errc::unavailable, t[4], t[5]);
  r.backends.push_back(b);
  roster::info::adapter_row a;
  a.info.backend = t[3];
  a.info.name = t[6];
  a.info.driver_version = t[7];
  a.info.pci_address = t[5];
  a.selected = false;
  a.selector_reason = t[4];
  r.adapters.push_back(a);
  roster::info::circuit_row c;
  c.name = t[6];
  c.identity = t[7];
  c.preferred = t[3] + ":0";
  c.adapters = {c.preferred, t[1]};
  r.circuits.push_back(c);
  for (std::size_t i = 8; i < t.size() && i < 64; ++i)
    r.warnings.emplace_back(roster::errc::invalid_argument, t[i], t[i - 1]);

  const std::string text = roster::info::render_json(r);
  json back;
  try {
    back = json::parse(text);  // strict: throws on bytes that are not UTF-8
  } catch (const json::exception& e) {
    ROSTER_FUZZ_CHECK(false, "the output does not parse: %s", e.what());
  }
  ROSTER_FUZZ_CHECK(back.is_object() && back["warnings"].size() == r.warnings.size(), "the warnings are not all there");
  if (!t[1].empty()) ROSTER_FUZZ_CHECK(back["selector"] == shown(t[1]), "the selector changed");
  ROSTER_FUZZ_CHECK(back["adapters"][0]["name"] == shown(t[6]), "the adapter's name changed");
  ROSTER_FUZZ_CHECK(back["backends"][0]["error"]["fix"] == shown(t[5]), "an error's fix changed");
  (void)roster::info::render_table(r);
  return 0;
}
