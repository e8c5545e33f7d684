// Lists the backends (which loads ROSTER_PLUGIN_PATH), runs a triad on the
// plugin's backend, then unloads every plugin and checks the backend is gone.
#include <roster/roster.hpp>

#include <cstdio>
#include <vector>

static bool has_toy_plugin() {
  for (const auto& b : roster::registered_backends())
    if (b.id() == "toy-plugin") return true;
  return false;
}

int main() {
  if (auto ok = roster::load_plugin_path_once(); !ok) return std::fprintf(stderr, "%s\n", ok.error().message().c_str()), 1;
  if (!has_toy_plugin()) return std::fprintf(stderr, "toy-plugin is not registered\n"), 1;
  {
    auto dev = roster::acquire("toy-plugin");
    if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;
    auto a = (*dev)->allocate<double>(100), b = (*dev)->allocate<double>(100), c = (*dev)->allocate<double>(100);
    if (!a || !b || !c) return 1;
    roster::program p;
    p.fill(*b, 1.0).fill(*c, 2.0).grid_sync().triad(*a, *b, *c, 3.0);  // a = 1 + 3 * 2
    std::vector<double> host(100);
    if (!(*dev)->dispatch(p) || !(*dev)->download<double>(*a, host) || host[99] != 7.0) return 1;
    std::printf("toy-plugin: a[99] = %g\n", host[99]);
  }  // release the plugin's devices before unloading it
  for (const auto& plugin : roster::loaded_plugins())
    if (auto ok = roster::unload_plugin(plugin); !ok) return std::fprintf(stderr, "%s\n", ok.error().message().c_str()), 1;
  std::printf("after unload: %s\n", has_toy_plugin() ? "still registered" : "gone");
  return has_toy_plugin() ? 1 : 0;
}
