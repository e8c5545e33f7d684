#pragma once
// Private: the spec grammar. detail/backend/spec_key.hpp holds the allocation-free
// normalizer of the cache's hit path, which must agree with parse_spec.

#include <roster/spec.hpp>
#include <roster/detail/base/text.hpp>

namespace roster {

ROSTER_INLINE expected<device_spec> parse_spec(std::string_view text) {
  const std::string_view given = text;
  auto bad = [given](std::string_view why) {
    return make_error(errc::invalid_argument, "device spec '" + detail::printable(given) + "': " + std::string(why),
                      "write a spec as TYPE or TYPE:ORDINAL, e.g. 'cpu', 'cuda:1', 'vulkan:0'");
  };
  text = detail::trim(text);
  if (text.empty()) return bad("the spec is empty");
  device_spec spec;
  auto colon = text.find(':');
  std::string_view type = text.substr(0, colon);
  if (type.empty()) return bad("the type before ':' is missing");
  for (char c : type) {
    if (!detail::is_name_char(c)) return bad("the type may hold only letters, digits, '_' and '-'");
    spec.backend.push_back(detail::to_lower(c));
  }
  if (colon == std::string_view::npos) return spec;
  std::string_view ord = text.substr(colon + 1);
  if (ord.empty()) return bad("the ordinal after ':' is missing");
  for (char c : ord)
    if (!detail::is_digit(c)) return bad("the ordinal must be a non-negative whole number");
  const auto value = detail::parse_uint(ord, 0x7fffffffu);
  if (!value) return bad("the ordinal is larger than 2^31 - 1");
  spec.ordinal = static_cast<std::uint32_t>(*value);
  return spec;
}

ROSTER_INLINE expected<std::string> normalize_spec(std::string_view spec) {
  auto parsed = parse_spec(spec);
  if (!parsed) return std::move(parsed).error();
  return parsed->str();
}

}  // namespace roster
