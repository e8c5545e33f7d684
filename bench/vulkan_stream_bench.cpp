// STREAM on the Vulkan backend (copy, mul, add, triad, dot; float and
// double), each op a one-step program timed with the device's own clock
// (timestamp queries), median of --runs runs after a warm-up, in GB/s. The
// CUDA backend runs the same programs in the same process as the baseline
// when it is linked and "cuda:0" opens.
//
//   vulkan_stream_bench [--n=268435456] [--runs=100] [--vulkan=vulkan:0] [--cuda=cuda:0]
//                       [google benchmark flags]
//
// --n defaults to 2^28 on a discrete or integrated GPU and 2^20 otherwise
// (lavapipe). The table printed last gives both backends side by side.
#include <roster/acquire.hpp>
#include <roster/backends/vulkan.hpp>

#include <benchmark/benchmark.h>

#include "stream_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

struct options {
  std::size_t n = 0;  // 0: pick from the adapter type
  int runs = 100;
  std::string vulkan = "vulkan:0";
  std::string cuda = "cuda:0";
};

options opts;

using namespace stream_bench;

// Reads roster's flags into opts and hands the rest to Google Benchmark.
void parse_args(int argc, char** argv) {
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (parse_flag(argv[i], "--n", v)) opts.n = std::strtoull(v.c_str(), nullptr, 0);
    else if (parse_flag(argv[i], "--runs", v)) opts.runs = std::max(1, std::atoi(v.c_str()));
    else if (parse_flag(argv[i], "--vulkan", v)) opts.vulkan = v;
    else if (parse_flag(argv[i], "--cuda", v)) opts.cuda = v;
    else rest.push_back(argv[i]);
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
}

struct opened {
  std::string name;
  std::unique_ptr<roster::device> device;
};

// Opens the Vulkan device and, when it is linked and opens, the CUDA one;
// false when the Vulkan device does not open.
bool open_devices(std::vector<opened>& devices) {
  auto vk = roster::acquire(opts.vulkan);
  if (!vk) {
    std::fprintf(stderr, "vulkan_stream_bench: %s\n", vk.error().message().c_str());
    return false;
  }
  const roster::adapter_info vk_adapter = (*vk)->adapter();
  devices.push_back({"vulkan", std::move(*vk)});
  if (roster::find_backend("cuda") != nullptr) {
    if (auto cu = roster::acquire(opts.cuda)) {
      const bool same = (*cu)->adapter().uuid == vk_adapter.uuid;
      std::printf("baseline %s: %s%s\n", opts.cuda.c_str(), (*cu)->adapter().name.c_str(),
                  same ? " (same device as the Vulkan adapter, by UUID)" : " (NOT the Vulkan adapter's device)");
      devices.push_back({"cuda", std::move(*cu)});
    } else {
      std::printf("baseline %s did not open: %s\n", opts.cuda.c_str(), cu.error().message().c_str());
    }
  } else {
    std::printf("baseline: the CUDA backend is not linked in this build\n");
  }
  return true;
}

// Picks n from the adapter type when --n did not set it, and prints the
// Vulkan adapter and the run's settings.
void describe_run(const roster::adapter_info& vk_adapter) {
  if (opts.n == 0)
    opts.n = vk_adapter.type == roster::device_type::discrete_gpu ||
                     vk_adapter.type == roster::device_type::integrated_gpu
                 ? std::size_t{1} << 28
                 : std::size_t{1} << 20;
  std::printf("vulkan %s: %s (%s, %s, pci %s, %.1f GiB), driver %s; n = %zu, median of %d timed runs\n",
              opts.vulkan.c_str(), vk_adapter.name.c_str(), std::string(roster::to_string(vk_adapter.type)).c_str(),
              vk_adapter.uuid_string().c_str(), vk_adapter.pci_address.empty() ? "-" : vk_adapter.pci_address.c_str(),
              static_cast<double>(vk_adapter.memory_bytes) / (1 << 30), vk_adapter.driver_version.c_str(), opts.n,
              opts.runs);
}

// Allocates and initialises the buffers of type t on d; null when either fails.
std::unique_ptr<stream_set> make_set(const opened& d, roster::element_type t) {
  auto s = std::make_unique<stream_set>();
  s->device = d.device.get();
  s->type = t;
  auto a = d.device->allocate(t, opts.n), b = d.device->allocate(t, opts.n), c = d.device->allocate(t, opts.n),
       r = d.device->allocate(t, 1);
  if (!a || !b || !c || !r) {
    std::fprintf(stderr, "vulkan_stream_bench: %s: allocation of 3 x %zu %s failed\n", d.name.c_str(), opts.n,
                 std::string(roster::to_string(t)).c_str());
    return nullptr;
  }
  s->a = *a, s->b = *b, s->c = *c, s->r = *r;
  roster::program init;
  init.fill(s->a, 0.1).fill(s->b, 0.2).fill(s->c, 0.0);
  if (auto ok = d.device->dispatch(init); !ok || !d.device->synchronize()) {
    std::fprintf(stderr, "vulkan_stream_bench: %s: %s\n", d.name.c_str(),
                 ok ? "synchronize failed" : ok.error().message().c_str());
    return nullptr;
  }
  return s;
}

// Registers one benchmark for each STREAM op on set s of device d.
void register_ops(const opened& d, const stream_set* s) {
  for (auto o : stream_ops)
    benchmark::RegisterBenchmark(("stream/" + d.name + "/" + std::string(roster::to_string(s->type)) + "/" +
                                  std::string(roster::to_string(o)))
                                     .c_str(),
                                 run_op, s, o, d.name, opts.runs)
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
}

// Allocates and initialises every set up front and registers its ops (one
// type per device at a time would also do; 2^28 doubles x 3 is 6 GiB, well
// within an H200); false when a set fails.
bool prepare_sets(const std::vector<opened>& devices, std::vector<std::unique_ptr<stream_set>>& sets) {
  for (auto& d : devices)
    for (auto t : {roster::element_type::f32, roster::element_type::f64}) {
      if (t == roster::element_type::f64 && !d.device->caps().f64) continue;
      auto s = make_set(d, t);
      if (!s) return false;
      register_ops(d, s.get());
      sets.push_back(std::move(s));
    }
  return true;
}


}  // namespace

int main(int argc, char** argv) {
  parse_args(argc, argv);
  std::vector<opened> devices;
  if (!open_devices(devices)) return 1;
  describe_run(devices.front().device->adapter());
  std::vector<std::unique_ptr<stream_set>> sets;
  if (!prepare_sets(devices, sets)) return 1;

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  print_table("vulkan", opts.n, devices.size() > 1);
  for (auto& s : sets)
    for (auto* b : {&s->a, &s->b, &s->c, &s->r}) (void)s->device->release(*b);
  return 0;
}
