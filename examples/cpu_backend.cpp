// The CPU backend used directly: including its header registers "cpu" (in a
// header-only build too) and gives the concrete roster::cpu::device.
#include <roster/roster.hpp>

#include <cstdio>

#include <roster/backends/cpu.hpp>   // registers "cpu"; also gives roster::cpu::device

int main() {
  auto dev = roster::open_as<roster::cpu::backend>();        // a roster::cpu::device, unwrapped
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;
  unsigned threads = (*dev)->threads();
  std::printf("cpu:0 runs on %u threads; registered: %s\n", threads, roster::find_backend("cpu") ? "yes" : "no");
  return threads >= 1 && roster::find_backend("cpu") != nullptr ? 0 : 1;
}
