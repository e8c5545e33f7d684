// One file, every backend: roster and its backends compiled here, with no
// roster library, no GPU tool and no vendor library on the link line.
// Lists each backend's adapters, then runs STREAM with a checked dot on each
// device spec given: ./one_file cpu:0 vulkan:0 opencl:0
#define ROSTER_SOURCE
#include <roster/backends/cpu.hpp>     // registers "cpu"
#include <roster/backends/cuda.hpp>    // registers "cuda" (no CUDA header: opens libcuda.so.1 at run time)
#include <roster/backends/opencl.hpp>  // registers "opencl" (needs <CL/cl.h>)
#include <roster/backends/vulkan.hpp>  // registers "vulkan" (needs <vulkan/vulkan.h>)
#include <roster/native.hpp>               // roster::kernels_loaded
#include <roster/roster.hpp>

#include <cstdio>
#include <string>
#include <vector>

// Prints "id: spec name; spec name", "id: no adapter: why" or "id: error: message" on one line.
static void list(const roster::backend_entry& b) {
  std::string line(b.id());
  auto adapters = roster::enumerate_adapters(*b.registration);
  if (!adapters) {
    line += ": error: " + adapters.error().message();
  } else {
    line += ":";
    for (const auto& a : *adapters) line += " " + a.spec() + " " + a.name + ";";
    // With none, the backend's own error says why (e.g. no NVIDIA driver) and its Fix.
    if (adapters->empty()) {
      auto dev = roster::acquire(std::string(b.id()) + ":0");
      line += dev ? std::string(" no adapter") : " no adapter: " + dev.error().message();
    }
  }
  for (char& c : line)
    if (c == '\n') c = ' ';
  std::printf("%s\n", line.c_str());
}

// Runs the STREAM ops and a dot on `spec`; true when every result is right.
static bool stream(const char* spec) {
  auto dev = roster::acquire(spec);
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message().c_str()), false;
  const std::size_t n = 5000;
  auto a = (*dev)->allocate<float>(n), b = (*dev)->allocate<float>(n);
  auto c = (*dev)->allocate<float>(n), r = (*dev)->allocate<float>(1);
  if (!a || !b || !c || !r) return std::fprintf(stderr, "%s: allocation failed\n", spec), false;
  roster::program p;
  p.fill(*a, 1.0).fill(*b, 2.0).fill(*c, 0.0).grid_sync();
  p.copy(*c, *a).grid_sync();              // c = 1
  p.mul(*b, *c, 3.0).grid_sync();          // b = 3
  p.add(*c, *a, *b).grid_sync();           // c = 4
  p.triad(*a, *b, *c, 0.5).grid_sync();    // a = 3 + 0.5 * 4 = 5
  p.nstream(*a, *b, *c, 2.0).grid_sync();  // a = 5 + 3 + 2 * 4 = 16
  p.dot(*r, *a, *b);                       // r[0] = 16 * 3 * n
  if (auto ok = (*dev)->dispatch(p); !ok) return std::fprintf(stderr, "%s\n", ok.error().message().c_str()), false;
  if (!(*dev)->synchronize()) return false;
  std::vector<float> ha(n), hr(1);
  if (!(*dev)->download<float>(*a, ha) || !(*dev)->download<float>(*r, hr)) return false;
  const bool right = ha[0] == 16.0f && ha[n - 1] == 16.0f && hr[0] == 48.0f * n;
  std::printf("%s (%s): a[0] = %g, dot = %g, %s\n", spec, (*dev)->adapter().name.c_str(), ha[0], hr[0],
              right ? "ok" : "WRONG");
  // How the built-in kernels were made ready, in the driver's words (CUDA:
  // the image's SASS or PTX it compiled; Vulkan: its pipelines); the CPU's
  // are compiled into the program and say nothing.
  if (auto load = roster::kernels_loaded(**dev); load && *load)
    std::printf("kernels of %s: %s, %.1f ms\n", spec, (*load)->how.c_str(), (*load)->ns / 1e6);
  return right;
}

int main(int argc, char** argv) {
  for (const auto& b : roster::registered_backends()) list(b);
  bool ok = true;
  for (int i = 1; i < argc; ++i) ok = stream(argv[i]) && ok;
  return ok ? 0 : 1;
}
