// Loads the plugins named by ROSTER_PLUGIN_PATH (none is fine) and lists each
// backend's adapters while holding roster::backends_in_use, so no plugin is
// unmapped while its registration is in use.
#include <roster/roster.hpp>

#include <cstdio>
#include <string_view>
#include <vector>

static void use(std::string_view id, const std::vector<roster::adapter_info>& list) {
  std::printf("%.*s: %zu adapter(s)\n", static_cast<int>(id.size()), id.data(), list.size());
}

int main() {
  if (auto ok = roster::load_plugin_path_once(); !ok) return std::fprintf(stderr, "%s\n", ok.error().message().c_str()), 1;
  roster::backends_in_use pin;  // no plugin is unmapped until it ends
  for (const auto& b : roster::registered_backends())
    if (auto list = roster::enumerate_adapters(*b.registration)) use(b.id(), *list);
  return roster::registered_backends().empty() ? 1 : 0;
}
