// An MPI program that binds each rank to a device the way an HPC code would
// at start-up, checks the whole job's placement, and runs a STREAM triad on
// the bound device. Each rank prints one line; rank 0 prints the job check.
// Launch it under mpirun or srun: `mpirun -np 4 rank_binding`.
// A CUDA code's next line is cudaSetDevice(*b->ordinal_for("cuda")).

#include <roster/mpi.hpp>
#include <roster/roster.hpp>

#include <cstdio>
#include <string>
#include <vector>

#if defined(ROSTER_EXAMPLE_CUDART)
#  include <cuda_runtime.h>
#endif

namespace {

// Runs a triad on the device and returns whether every element is right.
bool triad_runs(roster::device& dev) {
  constexpr std::size_t n = 1 << 20;
  auto a = dev.allocate<double>(n), x = dev.allocate<double>(n), y = dev.allocate<double>(n);
  if (!a || !x || !y) return false;
  roster::program p;
  p.fill(*x, 1.0).fill(*y, 2.0).grid_sync().triad(*a, *x, *y, 3.0);
  std::vector<double> out(n);
  if (!dev.dispatch(p) || !dev.download<double>(*a, out)) return false;
  return out.front() == 7.0 && out.back() == 7.0;
}

// The CUDA code's next line: the bound GPU by its CUDA ordinal, then a
// runtime-API allocation there. Returns what happened, "-" without CUDA.
std::string cuda_next_line(const roster::rank_binding& b) {
#if defined(ROSTER_EXAMPLE_CUDART)
  const auto ordinal = b.ordinal_for("cuda");
  if (!ordinal) return "-";
  void* p = nullptr;
  cudaError_t e = cudaSetDevice(static_cast<int>(*ordinal));
  if (e == cudaSuccess) e = cudaMalloc(&p, 1 << 20);
  if (e == cudaSuccess) e = cudaFree(p);
  return e == cudaSuccess ? "ok" : cudaGetErrorName(e);
#else
  (void)b;
  return "-";
#endif
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  auto b = roster::mpi::bind(MPI_COMM_WORLD);  // collective
  auto job = roster::mpi::check_job(MPI_COMM_WORLD, b ? *b : roster::rank_binding{});  // collective; rank 0 gets the report
  if (job && !job->ok()) std::fputs(job->table().c_str(), stderr);
  if (!b) {
    std::fprintf(stderr, "%s\n", b.error().message().c_str());
    status = 1;
  }
  if (b) {
    auto d = b->circuit->open();
    const bool right = d && triad_runs(**d);
    const auto cuda = b->ordinal_for("cuda");
    const std::string next = cuda_next_line(*b);
    std::printf("rank=%d local=%d circuit=%zu adapter=%s cuda=%s cudaSetDevice=%s policy='%s' triad=%s\n",
                b->world_rank, b->launcher ? b->launcher->rank : -1, b->circuit->index, b->adapter.spec().c_str(),
                cuda ? std::to_string(*cuda).c_str() : "-", next.c_str(), b->policy.c_str(), right ? "ok" : "WRONG");
    if (next != "-" && next != "ok") status = 1;
    if (!b->warning.empty()) std::printf("warning: %s\n", b->warning.c_str());
    if (!right) status = 1;
  }
  if (!job) {
    std::fprintf(stderr, "%s\n", job.error().message().c_str());
    status = 1;
  } else if (!job->records.empty()) {
    std::fflush(stdout);
    if (job->ok()) std::printf("%s", job->table().c_str());
    std::printf("job: %s\n", job->json().c_str());
  }
  MPI_Finalize();
  return status;
}
