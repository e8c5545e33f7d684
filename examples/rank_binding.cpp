// Binds this process to a circuit the way an MPI code would at start-up, runs
// a triad there, and prints one line: the rank, the circuit, its UUID and the
// adapter that ran. Launch it under mpirun: `mpirun -np 2 rank_binding`.

#include <roster/roster.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto b = roster::bind_rank();
  if (!b) {
    std::fprintf(stderr, "%s\n", b.error().message().c_str());
    return 1;
  }
  auto d = b->circuit->open();
  if (!d) {
    std::fprintf(stderr, "%s\n", d.error().message().c_str());
    return 1;
  }
  roster::device& dev = **d;
  constexpr std::size_t n = 1 << 20;
  auto a = dev.allocate<double>(n), x = dev.allocate<double>(n), y = dev.allocate<double>(n);
  if (!a || !x || !y) {
    std::fprintf(stderr, "allocation failed\n");
    return 1;
  }
  roster::program p;
  p.fill(*x, 1.0).fill(*y, 2.0).grid_sync().triad(*a, *x, *y, 3.0);
  std::vector<double> out(n);
  if (auto ok = dev.dispatch(p); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message().c_str());
    return 1;
  }
  if (auto ok = dev.download<double>(*a, out); !ok) {
    std::fprintf(stderr, "%s\n", ok.error().message().c_str());
    return 1;
  }
  const bool right = out.front() == 7.0 && out.back() == 7.0;
  std::printf("rank=%d circuit=%zu uuid=%s adapter=%s name='%s' triad=%s\n",
              b->launcher ? b->launcher->rank : -1, b->circuit->index, dev.adapter().uuid_string().c_str(),
              dev.adapter().spec().c_str(), dev.adapter().name.c_str(), right ? "ok" : "WRONG");
  if (!b->warning.empty()) std::printf("warning: %s\n", b->warning.c_str());
  return right ? 0 : 1;
}
