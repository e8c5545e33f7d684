#pragma once
// NVML (libnvidia-ml.so.1, also looked for in /usr/local/nvidia/lib64),
// loaded with dlopen once per process and never closed, so nothing links it
// and no NVML header is needed to build: the GPU list (gpu_list.hpp) and the
// occupancy (occupancy.hpp) both read it through nvml().

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <type_traits>

namespace roster::detail {

// NVML's C ABI, the calls roster makes, declared here.
struct nvml_api {
  struct memory {
    unsigned long long total, free, used;
  };
  struct process_v3 {
    unsigned pid;
    unsigned long long used_gpu_memory;
    unsigned gpu_instance_id, compute_instance_id;
  };
  struct pci_info {
    char bus_id_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
  };
  int (*init)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*by_index)(unsigned, void**) = nullptr;
  int (*by_uuid)(const char*, void**) = nullptr;
  int (*by_pci)(const char*, void**) = nullptr;
  int (*uuid)(void*, char*, unsigned) = nullptr;
  int (*pci)(void*, pci_info*) = nullptr;
  int (*memory_info)(void*, memory*) = nullptr;
  int (*compute_mode)(void*, int*) = nullptr;
  int (*mig_mode)(void*, unsigned*, unsigned*) = nullptr;
  int (*processes)(void*, unsigned*, process_v3*) = nullptr;
  int (*max_mig)(void*, unsigned*) = nullptr;
  int (*mig_by_index)(void*, unsigned, void**) = nullptr;
  bool ready = false;  // loaded and nvmlInit_v2 succeeded; each call may still be null
};

// Loads and starts NVML once; ready is false when it is absent or fails to start.
inline const nvml_api& nvml() {
  static const nvml_api api = [] {
    nvml_api a;
    void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = ::dlopen("/usr/local/nvidia/lib64/libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return a;
    auto sym = [lib](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
    };
    sym(a.init, "nvmlInit_v2");
    sym(a.count, "nvmlDeviceGetCount_v2");
    sym(a.by_index, "nvmlDeviceGetHandleByIndex_v2");
    sym(a.by_uuid, "nvmlDeviceGetHandleByUUID");
    sym(a.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    sym(a.uuid, "nvmlDeviceGetUUID");
    sym(a.pci, "nvmlDeviceGetPciInfo_v3");
    sym(a.memory_info, "nvmlDeviceGetMemoryInfo");
    sym(a.compute_mode, "nvmlDeviceGetComputeMode");
    sym(a.mig_mode, "nvmlDeviceGetMigMode");
    sym(a.processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    sym(a.max_mig, "nvmlDeviceGetMaxMigDeviceCount");
    sym(a.mig_by_index, "nvmlDeviceGetMigDeviceHandleByIndex");
    a.ready = a.init != nullptr && a.init() == 0;
    return a;
  }();
  return api;
}

// Starts NVML on a thread of its own while the caller does other work (the
// circuits' scan enumerates the backends meanwhile: cuInit alone takes ~190 ms
// on an H200 node, nvmlInit_v2 12-14 ms), so the occupancy read after it finds
// NVML ready. Only where an NVIDIA driver is present (/dev/nvidiactl); joined
// by join() or the destructor, so no thread outlives the scan. Where the
// thread cannot be made, nvml() simply starts on first use, as before.
class nvml_warmup {
 public:
  nvml_warmup() {
    if (::access("/dev/nvidiactl", F_OK) == 0) started_ = ::pthread_create(&thread_, nullptr, &start, nullptr) == 0;
  }
  nvml_warmup(const nvml_warmup&) = delete;
  nvml_warmup& operator=(const nvml_warmup&) = delete;
  ~nvml_warmup() { join(); }
  void join() {
    if (started_) ::pthread_join(thread_, nullptr);
    started_ = false;
  }

 private:
  static void* start(void*) {
    (void)nvml();
    return nullptr;
  }
  pthread_t thread_{};
  bool started_ = false;
};

}  // namespace roster::detail
