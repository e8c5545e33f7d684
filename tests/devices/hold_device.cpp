// Opens a device and holds it for some seconds: the "other process" of the
// occupancy check on a GPU node (scripts/gpu-check-placement).
//   devices_hold SPEC SECONDS
#include <roster/roster.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: devices_hold SPEC SECONDS\n");
    return 2;
  }
  auto d = roster::acquire(argv[1]);
  if (!d) {
    std::fprintf(stderr, "%s\n", d.error().message().c_str());
    return 1;
  }
  auto b = (*d)->allocate(roster::element_type::f32, 1 << 20);
  if (!b) {
    std::fprintf(stderr, "%s\n", b.error().message().c_str());
    return 1;
  }
  std::printf("holding %s\n", argv[1]);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(std::atoi(argv[2])));
  return 0;
}
