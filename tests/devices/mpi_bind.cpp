// Run under mpirun: registers two test adapters (two GPUs with different
// UUIDs), binds this rank with roster::bind_rank() and prints
// "rank=R circuit=I uuid=U", or an error line and exit status 1.

#include "test_backends.hpp"

#include <cstdio>

int main() {
  using namespace devices_test;
  register_test_backends();
  roster::adapter_info g0 = make_adapter(backend_a, roster::device_type::discrete_gpu, 1, "0000:00:06.0", "Test H200");
  roster::adapter_info g1 = make_adapter(backend_a, roster::device_type::discrete_gpu, 2, "0000:00:07.0", "Test H200");
  set_adapters<0>({g0, g1});
  roster::rescan();
  auto b = roster::bind_rank();
  if (!b) {
    std::printf("error: %s\n", b.error().message().c_str());
    return 1;
  }
  auto d = b->circuit->open();
  if (!d) {
    std::printf("error: %s\n", d.error().message().c_str());
    return 1;
  }
  std::printf("rank=%d circuit=%zu uuid=%s\n", b->launcher ? b->launcher->rank : -1, b->circuit->index,
              (*d)->adapter().uuid_string().c_str());
  if (!b->warning.empty()) std::printf("warning: %s\n", b->warning.c_str());
  return 0;
}
