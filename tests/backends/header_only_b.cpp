#include <roster/backends/cpu.hpp>

#include <vector>

int header_only_b_open_and_fill() {
  auto d = roster::acquire("cpu");
  if (!d) return 0;
  auto a = (*d)->allocate<float>(3000);
  if (!a) return 0;
  roster::program p;
  p.fill(*a, 2.5);
  if (!(*d)->dispatch(p)) return 0;
  std::vector<float> out(3000);
  if (!(*d)->download(*a, std::span<float>(out))) return 0;
  for (float x : out)
    if (x != 2.5f) return 0;
  return 1;
}
