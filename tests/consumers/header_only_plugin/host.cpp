// Loads the plugin named by argv[1] and acquires its backend "toy-plugin";
// prints what load_plugin said. Exits 0 when the backend opened, 3 when
// load_plugin refused the plugin, 1 when load_plugin said yes but the backend
// is not there (the silent failure).
#include <roster/roster.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  auto p = roster::load_plugin(argv[1]);
  if (!p) return std::printf("load_plugin: %s\n", p.error().message().c_str()), 3;
  auto dev = roster::acquire("toy-plugin");
  if (!dev) return std::printf("load_plugin succeeded, but: %s\n", dev.error().message().c_str()), 1;
  std::printf("opened %s\n", (*dev)->adapter().spec().c_str());
  return 0;
}
