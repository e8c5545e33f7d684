// Fuzzes the selector parser (ROSTER_DEVICE_SELECTOR's grammar): a parsed
// selector judges adapters without fault and reads back as itself from its
// terms' texts; a rejected one says why, with a Fix: part.
#include <roster/roster.hpp>

#include "check.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::vector<roster::adapter_info> sample_adapters() {
  std::vector<roster::adapter_info> out;
  const roster::device_type types[] = {roster::device_type::discrete_gpu, roster::device_type::integrated_gpu,
                                       roster::device_type::virtual_gpu, roster::device_type::other,
                                       roster::device_type::cpu};
  const char* backends[] = {"cuda", "vulkan", "cpu", "Vulkan", ""};
  for (int i = 0; i < 5; ++i) {
    roster::adapter_info a;
    a.backend = backends[i];
    a.ordinal = static_cast<std::uint32_t>(i == 4 ? 0x7fffffff : i);
    a.type = types[i];
    if (i % 2 == 0)
      for (std::size_t k = 0; k < a.uuid.size(); ++k) a.uuid[k] = static_cast<std::uint8_t>(0x0b + 17 * k * (i + 1));
    const char* pci[] = {"0000:00:07.0", "00:08", "", "0000:3B:00.1", "ffff:ff:1f.7"};
    a.pci_address = pci[i];
    out.push_back(a);
  }
  return out;
}

bool same_terms(const roster::selector& x, const roster::selector& y) {
  if (x.terms.size() != y.terms.size()) return false;
  for (std::size_t i = 0; i < x.terms.size(); ++i) {
    const auto& a = x.terms[i];
    const auto& b = y.terms[i];
    if (a.exclude != b.exclude || a.backend != b.backend || a.what != b.what || a.ordinal != b.ordinal ||
        a.type != b.type || a.uuid_hex != b.uuid_hex || a.pci != b.pci)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<roster::adapter_info> adapters = sample_adapters();
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto sel = roster::parse_selector(text);
  if (!sel) {
    roster_fuzz::check_fix(sel.error());
    ROSTER_FUZZ_CHECK(sel.error().code() == roster::errc::invalid_argument, "wrong error code");
    return 0;
  }
  std::string joined;
  for (const auto& t : sel->terms) {
    ROSTER_FUZZ_CHECK(!t.text.empty(), "a parsed term has no text");
    ROSTER_FUZZ_CHECK(!t.backend.empty(), "a parsed term has no backend");
    if (t.what == roster::selector_what::uuid_prefix)
      ROSTER_FUZZ_CHECK(t.uuid_hex.size() >= 4 && t.uuid_hex.size() <= 32, "UUID prefix of %zu digits",
                        t.uuid_hex.size());
    if (t.what == roster::selector_what::ordinal) ROSTER_FUZZ_CHECK(t.ordinal <= 0x7fffffffu, "ordinal too large");
    joined += (joined.empty() ? "" : ";") + t.text;
  }
  auto again = roster::parse_selector(joined);
  ROSTER_FUZZ_CHECK(again.has_value() && same_terms(*sel, *again), "terms do not read back: '%s'", joined.c_str());

  for (const auto& a : adapters) {
    auto v = sel->judge(a);
    ROSTER_FUZZ_CHECK(v.order < sel->terms.size() || v.order == 0, "verdict order out of range");
    ROSTER_FUZZ_CHECK(!v.reason.empty(), "a verdict without a reason");
  }
  (void)roster::normalize_pci(text);
  return 0;
}
