// Runs triad where roster decides, with roster compiled once (roster.cpp).
#include "stream.hpp"

#include <cstdio>

int main() {
  auto dev = roster::default_device();
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), 1;
  const int bad = run_triad(**dev, 100000);
  std::printf("%s: triad %s\n", (*dev)->adapter().spec().c_str(), bad ? "WRONG" : "right");
  return bad;
}
