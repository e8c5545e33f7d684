// Run under mpirun with ROSTER_TUNING=measure and the CPU backend linked:
// decides where to run and prints "rank=R adapter=SPEC measure=REASON".
// Local rank 0 measures the CPU and writes its record; the other ranks wait
// for it (mpi_measure.sh checks that one rank measured and one record exists).
// With MPI_MEASURE_DONE_DIR set, each other rank leaves a file there once it
// has decided, and local rank 0 stays until all have (bounded), as the rank 0
// of a job runs on after its decision.

#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

int main() {
  auto d = roster::decide();
  if (!d) {
    std::printf("error: %s\n", d.error().message().c_str());
    return 1;
  }
  std::string measure = "(none)";
  for (const auto& r : d->reasons)
    if (r.rfind("measure: ", 0) == 0) measure = r.substr(9);
  const int rank = d->launcher ? d->launcher->rank.rank : -1;
  std::printf("rank=%d adapter=%s measure=%s\n", rank, d->spec.str().c_str(), measure.c_str());
  std::fflush(stdout);
  if (const char* dir = std::getenv("MPI_MEASURE_DONE_DIR"); dir != nullptr && *dir != 0 && d->launcher) {
    namespace fs = std::filesystem;
    if (rank != 0) {
      std::FILE* f = std::fopen((fs::path(dir) / std::to_string(rank)).c_str(), "w");
      if (f != nullptr) std::fclose(f);
      return 0;
    }
    const auto others = static_cast<std::ptrdiff_t>(d->launcher->rank.size - 1);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::error_code ec;
    while (std::chrono::steady_clock::now() < limit &&
           std::distance(fs::directory_iterator(dir, ec), fs::directory_iterator()) < others)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}
