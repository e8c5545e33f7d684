// Fuzzes the device spec parser: roster::parse_spec, the cache's allocation-free
// normalizer (which must agree with it wherever it answers), normalize_spec,
// and get_device's hit path over arbitrary text.
#include <roster/roster.hpp>
#include <roster/detail/backend/spec_key.hpp>

#include "check.hpp"
#include "../tests/support/identity_device.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

roster::expected<std::unique_ptr<roster::device>> open_idle(std::uint32_t ordinal) {
  if (ordinal >= 2)
    return roster::make_error(roster::errc::not_found, "fuzz: no adapter " + std::to_string(ordinal), "use fuzz:0 or fuzz:1");
  // A device that only reports its adapter: get_device needs something to open.
  roster::adapter_info info;
  info.backend = "fuzz";
  info.ordinal = ordinal;
  info.name = "fuzz";
  return std::unique_ptr<roster::device>(std::make_unique<roster_test_support::identity_device>(std::move(info)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool registered = roster::register_factory("fuzz", &open_idle, nullptr).has_value();
  ROSTER_FUZZ_CHECK(registered, "register_factory failed");
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto spec = roster::parse_spec(text);
  if (!spec) roster_fuzz::check_fix(spec.error());

  // The normalizer answers only for what it handles, and then as parse_spec does.
  char out[roster::detail::spec_key_capacity];
  const std::size_t n = roster::detail::normalize_spec_into(text, out);
  if (n != 0) {
    ROSTER_FUZZ_CHECK(spec.has_value(), "normalizer accepted a spec parse_spec rejects");
    ROSTER_FUZZ_CHECK(spec->str() == std::string_view(out, n), "normalizer and parse_spec disagree: '%.*s' vs '%s'",
                      static_cast<int>(n), out, spec->str().c_str());
  }

  // A parsed spec reads back as itself.
  if (spec) {
    auto again = roster::parse_spec(spec->str());
    ROSTER_FUZZ_CHECK(again.has_value() && *again == *spec, "'%s' does not parse back", spec->str().c_str());
    auto norm = roster::normalize_spec(text);
    ROSTER_FUZZ_CHECK(norm.has_value() && *norm == spec->str(), "normalize_spec disagrees");
  }

  // get_device: a malformed spec is an error (never cached); a fuzz spec
  // opens the one cached device whatever its spelling. (Few ordinals: each
  // new spec is a cache slot for the life of the process.)
  if (!spec || (spec->backend == "fuzz" && spec->ordinal < 8)) {
    auto d = roster::get_device(text);
    if (!spec) {
      ROSTER_FUZZ_CHECK(!d.has_value(), "get_device accepted a malformed spec");
      roster_fuzz::check_fix(d.error());
    } else if (spec->ordinal < 2) {
      auto canonical = roster::get_device(spec->str());
      ROSTER_FUZZ_CHECK(d.has_value() && canonical.has_value() && *d == *canonical, "two spellings, two devices");
      ROSTER_FUZZ_CHECK((*d)->adapter().ordinal == spec->ordinal, "wrong adapter");
    } else {
      ROSTER_FUZZ_CHECK(!d.has_value(), "an ordinal the factory refuses opened");
      roster_fuzz::check_fix(d.error());
    }
  }
  return 0;
}
