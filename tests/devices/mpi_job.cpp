// Run under mpirun: registers four test adapters (four GPUs with different
// UUIDs and PCI addresses), binds through roster::mpi::bind with the world
// communicator, checks the whole job, and on rank 0 prints "job: " and the
// check's JSON (tests/devices/mpi_job.py reads it).

#include "test_backends.hpp"

#include <roster/mpi.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  using namespace devices_test;
  register_test_backends();
  std::vector<roster::adapter_info> gpus;
  for (std::uint8_t g = 0; g < 4; ++g)
    gpus.push_back(make_adapter(backend_a, roster::device_type::discrete_gpu, static_cast<std::uint8_t>(g + 1),
                                "0000:00:0" + std::to_string(6 + g) + ".0", "Test H200"));
  set_adapters<0>(gpus);
  roster::rescan();
  auto b = roster::mpi::bind(MPI_COMM_WORLD);
  if (!b) std::printf("error: %s\n", b.error().message().c_str());
  auto job = roster::mpi::check_job(MPI_COMM_WORLD, b ? *b : roster::rank_binding{});
  if (!job) std::printf("error: %s\n", job.error().message().c_str());
  else if (!job->records.empty()) {
    std::fprintf(stderr, "%s", job->table().c_str());
    std::printf("job: %s\n", job->json().c_str());
  }
  MPI_Finalize();
  return b && job ? 0 : 1;
}
