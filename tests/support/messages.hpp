#pragma once
// The rule every message roster prints is held to: each layer adds its
// context once. Shared by the backend messages test (the library's paths)
// and the tools suite (what roster-info prints on its failure runs).

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace roster_test {

/// Says where the context of `what` repeats, or returns nullopt: two equal
/// segments in a row ("cuda: cuda:"), or one backend named as the context
/// of two segments ("cuda: cuda:0:", "vulkan:0: ... vulkan:0:"). Segments are
/// the parts between ": "; `is_backend` says which words are backend ids.
inline std::optional<std::string> repeated_context(std::string_view what,
                                                   const std::function<bool(std::string_view)>& is_backend) {
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= what.size();) {
    const std::size_t end = std::min(what.find(": ", at), what.size());
    std::string_view part = what.substr(at, end - at);
    while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);  // a line's indent
    parts.emplace_back(part);
    at = end + 2;
  }
  static const std::regex context(R"(^[A-Za-z][A-Za-z0-9_-]*(:[0-9]+)?$)");
  std::set<std::string> backends_named;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0 && parts[i] == parts[i - 1] && !parts[i].empty()) return "'" + parts[i] + "' twice in a row";
    if (!std::regex_match(parts[i], context)) continue;
    const std::string root = parts[i].substr(0, parts[i].find(':'));
    if (!is_backend(root)) continue;
    if (!backends_named.insert(root).second) return "the backend '" + root + "' named twice as context";
  }
  return std::nullopt;
}

}  // namespace roster_test
