// STREAM on the OpenCL backend (copy, mul, add, triad, dot; float and
// double), each op a one-step program timed with the device's own clock (the
// queue's profiling events), median of --runs runs after a warm-up, in GB/s.
// The CUDA backend runs the same programs in the same process as the baseline
// when it is linked and "cuda:0" opens.
//
//   opencl_stream_bench [--n=268435456] [--runs=100] [--opencl=SPEC] [--cuda=cuda:0]
//                       [google benchmark flags]
//
// Without --opencl: the OpenCL adapter with cuda:0's UUID (the same GPU),
// else the first GPU, else opencl:0. --n defaults to 2^28 on a discrete or
// integrated GPU and 2^20 otherwise (PoCL). The table printed last gives both
// backends side by side.
#include <roster/acquire.hpp>
#include <roster/backends/opencl.hpp>

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
  std::string opencl;  // empty: chosen as the header says
  std::string cuda = "cuda:0";
};

options opts;

using namespace stream_bench;

// One opened device and the backend name its figures carry.
struct opened {
  std::string name;
  std::unique_ptr<roster::device> device;
};

// Opens the OpenCL device (the one --opencl names, else as the header says)
// and, when the CUDA backend is linked and opens, the CUDA baseline after it.
bool open_devices(std::vector<opened>& devices) {
  std::unique_ptr<roster::device> cuda;
  if (roster::find_backend("cuda") != nullptr) {
    if (auto cu = roster::acquire(opts.cuda)) cuda = std::move(*cu);
    else std::printf("baseline %s did not open: %s\n", opts.cuda.c_str(), cu.error().message().c_str());
  } else {
    std::printf("baseline: the CUDA backend is not linked in this build\n");
  }
  if (opts.opencl.empty()) {
    std::string same_gpu, first_gpu;
    if (auto adapters = roster::opencl::backend::enumerate())
      for (const auto& a : *adapters) {
        if (cuda && a.has_uuid() && a.uuid == cuda->adapter().uuid && same_gpu.empty()) same_gpu = a.spec();
        if (a.type == roster::device_type::discrete_gpu && first_gpu.empty()) first_gpu = a.spec();
      }
    opts.opencl = !same_gpu.empty() ? same_gpu : !first_gpu.empty() ? first_gpu : "opencl:0";
  }
  auto cl = roster::acquire(opts.opencl);
  if (!cl) {
    std::fprintf(stderr, "opencl_stream_bench: %s\n", cl.error().message().c_str());
    return false;
  }
  devices.push_back({"opencl", std::move(*cl)});
  if (cuda) {
    const bool same = cuda->adapter().uuid == devices.front().device->adapter().uuid;
    std::printf("baseline %s: %s%s\n", opts.cuda.c_str(), cuda->adapter().name.c_str(),
                same ? " (same device as the OpenCL adapter, by UUID)" : " (NOT the OpenCL adapter's device)");
    devices.push_back({"cuda", std::move(cuda)});
  }
  return true;
}


}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (parse_flag(argv[i], "--n", v)) opts.n = std::strtoull(v.c_str(), nullptr, 0);
    else if (parse_flag(argv[i], "--runs", v)) opts.runs = std::max(1, std::atoi(v.c_str()));
    else if (parse_flag(argv[i], "--opencl", v)) opts.opencl = v;
    else if (parse_flag(argv[i], "--cuda", v)) opts.cuda = v;
    else rest.push_back(argv[i]);
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());

  std::vector<opened> devices;
  if (!open_devices(devices)) return 1;
  const roster::adapter_info cl_adapter = devices.front().device->adapter();
  if (opts.n == 0)
    opts.n = cl_adapter.type == roster::device_type::discrete_gpu ||
                     cl_adapter.type == roster::device_type::integrated_gpu
                 ? std::size_t{1} << 28
                 : std::size_t{1} << 20;
  std::printf("opencl %s: %s (%s, %s, pci %s, %.1f GiB), driver %s; n = %zu, median of %d timed runs\n",
              opts.opencl.c_str(), cl_adapter.name.c_str(), std::string(roster::to_string(cl_adapter.type)).c_str(),
              cl_adapter.has_uuid() ? cl_adapter.uuid_string().c_str() : "no uuid", cl_adapter.pci_address.empty() ? "-" : cl_adapter.pci_address.c_str(),
              static_cast<double>(cl_adapter.memory_bytes) / (1 << 30), cl_adapter.driver_version.c_str(), opts.n,
              opts.runs);

  // Allocate and initialise every set up front (one type per device at a
  // time would also do; 2^28 doubles x 3 is 6 GiB, well within an H200).
  std::vector<std::unique_ptr<stream_set>> sets;
  for (auto& d : devices)
    for (auto t : {roster::element_type::f32, roster::element_type::f64}) {
      if (t == roster::element_type::f64 && !d.device->caps().f64) continue;
      auto s = std::make_unique<stream_set>();
      s->device = d.device.get();
      s->type = t;
      auto a = d.device->allocate(t, opts.n), b = d.device->allocate(t, opts.n), c = d.device->allocate(t, opts.n),
           r = d.device->allocate(t, 1);
      if (!a || !b || !c || !r) {
        std::fprintf(stderr, "opencl_stream_bench: %s: allocation of 3 x %zu %s failed\n", d.name.c_str(), opts.n,
                     std::string(roster::to_string(t)).c_str());
        return 1;
      }
      s->a = *a, s->b = *b, s->c = *c, s->r = *r;
      roster::program init;
      init.fill(s->a, 0.1).fill(s->b, 0.2).fill(s->c, 0.0);
      if (auto ok = d.device->dispatch(init); !ok || !d.device->synchronize()) {
        std::fprintf(stderr, "opencl_stream_bench: %s: %s\n", d.name.c_str(),
                     ok ? "synchronize failed" : ok.error().message().c_str());
        return 1;
      }
      for (auto o : stream_ops)
        benchmark::RegisterBenchmark(("stream/" + d.name + "/" + std::string(roster::to_string(t)) + "/" +
                                      std::string(roster::to_string(o)))
                                         .c_str(),
                                     run_op, s.get(), o, d.name, opts.runs)
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
      sets.push_back(std::move(s));
    }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  print_table("opencl", opts.n, devices.size() > 1);
  for (auto& s : sets)
    for (auto* b : {&s->a, &s->b, &s->c, &s->r}) (void)s->device->release(*b);
  return 0;
}
