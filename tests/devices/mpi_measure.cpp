// Run under mpirun with ROSTER_TUNING=measure and the CPU backend linked:
// decides where to run and prints "rank=R adapter=SPEC measure=REASON".
// Local rank 0 measures the CPU and writes its record; the other ranks wait
// for it (mpi_measure.sh checks that one rank measured and one record exists).

#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>

#include <cstdio>
#include <string>

int main() {
  auto d = roster::decide();
  if (!d) {
    std::printf("error: %s\n", d.error().message().c_str());
    return 1;
  }
  std::string measure = "(none)";
  for (const auto& r : d->reasons)
    if (r.rfind("measure: ", 0) == 0) measure = r.substr(9);
  std::printf("rank=%d adapter=%s measure=%s\n", d->launcher ? d->launcher->rank.rank : -1, d->spec.str().c_str(),
              measure.c_str());
  return 0;
}
