// Loads the plugin named by argv[1] and acquires its backend "toy-plugin";
// prints what load_plugin said. Exits 0 when the backend opened, 3 when
// load_plugin refused the plugin, 1 when load_plugin said yes but the backend
// is not there (the silent failure). With "unload" as argv[2] it then
// releases the device and unloads the plugin: exits 0 when the plugin left
// loaded_plugins() and its backend left the registry, 4 when unload_plugin
// refused (the plugin still listed and its backend still opening), 5 when
// the two disagree.
#include <roster/roster.hpp>

#include <cstdio>
#include <string_view>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  auto p = roster::load_plugin(argv[1]);
  if (!p) return std::printf("load_plugin: %s\n", p.error().message().c_str()), 3;
  auto dev = roster::acquire("toy-plugin");
  if (!dev) return std::printf("load_plugin succeeded, but: %s\n", dev.error().message().c_str()), 1;
  std::printf("opened %s\n", (*dev)->adapter().spec().c_str());
  if (argc < 3 || std::string_view(argv[2]) != "unload") return 0;
  dev->reset();
  auto gone = roster::unload_plugin(*p);
  const bool listed = !roster::loaded_plugins().empty();
  const bool opens = roster::acquire("toy-plugin").has_value();
  std::printf("unload_plugin: %s\nlisted: %d, opens: %d\n", gone ? "ok" : gone.error().message().c_str(), listed, opens);
  if (gone) return !listed && !opens ? 0 : 5;
  return listed && opens ? 4 : 5;
}
