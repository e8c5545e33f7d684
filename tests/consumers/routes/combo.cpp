// Checks that every backend named on the command line is registered, and runs
// a triad on each: "cpu" must open; "cuda?" must be registered, and may fail
// to open (no GPU here). It names no backend header: what the link keeps is
// what is tested. On a missing backend, prints acquire's error and exits 3.
#include <roster/roster.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string id = argv[i];
    const bool optional = !id.empty() && id.back() == '?';
    if (optional) id.pop_back();
    auto dev = roster::acquire(id);
    if (!dev && dev.error().code() == roster::errc::not_found)
      return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 3;
    if (!dev && optional && roster::find_backend(id) != nullptr) {
      std::printf("%s: registered; does not open here: %s\n", id.c_str(), std::string(dev.error().what()).c_str());
      continue;
    }
    if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;
    const std::size_t n = 1000;
    auto a = (*dev)->allocate<float>(n), b = (*dev)->allocate<float>(n), c = (*dev)->allocate<float>(n);
    if (!a || !b || !c) return 1;
    roster::program p;
    p.fill(*b, 1.0f).fill(*c, 2.0f).grid_sync().triad(*a, *b, *c, 3.0f);  // a = 1 + 3 * 2
    std::vector<float> host(n);
    if (!(*dev)->dispatch(p) || !(*dev)->synchronize() || !(*dev)->download<float>(*a, host) || host[n - 1] != 7.0f)
      return std::fprintf(stderr, "%s: the triad gave a wrong result\n", id.c_str()), 1;
    std::printf("%s: a[%zu] = %g\n", (*dev)->adapter().spec().c_str(), n - 1, host[n - 1]);
  }
  return 0;
}
