#pragma once
// Strict mode: ROSTER_REQUIRE names what a device must be (`gpu`, `discrete`,
// a backend id, ...). Adapters that fall short are dropped from the circuits
// and the fallback chain no longer ends on the host CPU, so a job that must
// run on a GPU fails with an error instead of running slowly on the CPU, as
// OMP_TARGET_OFFLOAD=MANDATORY does for OpenMP offload.

#include <roster/backend.hpp>
#include <roster/error.hpp>
#include <roster/plugins.hpp>
#include <roster/detail/base/environment.hpp>
#include <roster/detail/base/text.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace roster::detail {

/// The device types a requirement word may name (any other word is a backend id).
inline constexpr std::string_view requirement_kinds[] = {"gpu", "discrete", "integrated", "virtual", "cpu"};

/// A parsed ROSTER_REQUIRE: every word must hold for an adapter to satisfy it.
struct requirement {
  std::string text;                ///< as written, trimmed
  std::vector<std::string> words;  ///< lower case

  /// Says why the adapter falls short, or returns empty when it satisfies every word.
  [[nodiscard]] std::string shortfall(const adapter_info& a) const {
    for (const auto& w : words) {
      bool ok = false;
      if (w == "gpu") ok = a.type == device_type::discrete_gpu || a.type == device_type::integrated_gpu ||
                           a.type == device_type::virtual_gpu;
      else if (w == "discrete") ok = a.type == device_type::discrete_gpu;
      else if (w == "integrated") ok = a.type == device_type::integrated_gpu;
      else if (w == "virtual") ok = a.type == device_type::virtual_gpu;
      else if (w == "cpu") ok = a.type == device_type::cpu;
      else ok = a.backend == w;  // a backend id
      if (!ok) return "ROSTER_REQUIRE='" + text + "': " + a.spec() + " (" + std::string(to_string(a.type)) +
                      ") is not '" + w + "'";
    }
    return {};
  }
  /// Says why no adapter of backend `id` can satisfy it (a word names another
  /// backend id), or returns empty.
  [[nodiscard]] std::string rules_out(std::string_view id) const {
    for (const auto& w : words) {
      if (std::find(std::begin(requirement_kinds), std::end(requirement_kinds), w) != std::end(requirement_kinds))
        continue;
      if (!iequal(w, id)) return "ROSTER_REQUIRE='" + text + "' names the backend '" + w + "'";
    }
    return {};
  }
};

/// Returns the words ROSTER_REQUIRE takes: the types, then the registered backend ids.
inline std::string requirement_words() {
  std::string out;
  for (std::string_view k : requirement_kinds) out += std::string(out.empty() ? "" : ", ") + std::string(k);
  backends_in_use pin;
  for (const auto& b : registered_backends())
    if (std::find(std::begin(requirement_kinds), std::end(requirement_kinds), b.id()) == std::end(requirement_kinds))
      out += ", " + std::string(b.id());
  return out;
}

/// Parses comma-separated words: gpu, discrete, integrated, virtual, cpu or
/// the id of a registered backend. Blank text is no requirement; an empty
/// word (`gpu,,cpu`), a malformed one or one that is neither a type nor a
/// registered backend (`gpus`) is an error naming it and the valid words.
inline expected<std::optional<requirement>> parse_requirement(std::string_view text) {
  requirement r;
  r.text = std::string(trim(text));
  if (r.text.empty()) return std::optional<requirement>{};
  const auto refuse = [&](std::string_view word, std::string_view why) {
    return make_error(errc::invalid_argument,
                      "ROSTER_REQUIRE='" + printable(r.text) + "': '" + printable(word) + "' " + std::string(why),
                      "use comma-separated words, each one of " + requirement_words() +
                          " (e.g. ROSTER_REQUIRE=gpu or ROSTER_REQUIRE=discrete,cuda)");
  };
  std::string_view rest = r.text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view raw = trim(rest.substr(0, comma));
    if (raw.empty()) return refuse(raw, "is an empty word (two ',' in a row, or one at an end)");
    std::string w;
    bool ok = raw.size() <= 48;
    for (char c : raw) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) ok = false;
      w += c;
    }
    if (!ok) return refuse(raw, "is not a requirement");
    const bool kind = std::find(std::begin(requirement_kinds), std::end(requirement_kinds), w) !=
                      std::end(requirement_kinds);
    if (!kind && find_backend(w) == nullptr)
      return refuse(raw, "is not a requirement: neither a device type nor a backend registered in this build");
    r.words.push_back(std::move(w));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return std::optional<requirement>(std::move(r));
}

/// Parses ROSTER_REQUIRE (nullopt when unset or blank).
inline expected<std::optional<requirement>> parsed_requirement_env() {
  return parse_requirement(env_text(env_require).value_or(std::string_view{}));
}

/// The error for "nothing satisfies the requirement", with its Fix.
inline roster::error requirement_unmet(const requirement& r, std::string_view who) {
  return roster::error(errc::unavailable,
                       std::string(who) + ": ROSTER_REQUIRE='" + r.text +
                           "' and no visible device satisfies it (strict mode: no fallback to the host CPU)",
                       "run where such a device is visible (check CUDA_VISIBLE_DEVICES and the job's GPU request), "
                       "relax ROSTER_REQUIRE, or unset it to allow the CPU fallback; ROSTER_TRACE=1 shows why each "
                       "adapter was dropped");
}

}  // namespace roster::detail
