#pragma once
// Adapter enumeration: every device of every OpenCL platform, with the
// identity circuits merge by (UUID from cl_khr_device_uuid, PCI address from
// cl_khr_pci_bus_info), its type, memory, driver and double support.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/adapters.hpp>

#include <roster/env.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace roster::opencl::detail {

template <class T>
ROSTER_INLINE T device_value(cl_device_id d, cl_device_info what, T fallback = T{}) {
  T v{};
  return fn().clGetDeviceInfo(d, what, sizeof v, &v, nullptr) == CL_SUCCESS ? v : fallback;
}

ROSTER_INLINE std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && s[start] == ' ') ++start;
  return s.substr(start);
}

ROSTER_INLINE std::string platform_text(cl_platform_id p, cl_platform_info what) {
  std::size_t size = 0;
  if (fn().clGetPlatformInfo(p, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (fn().clGetPlatformInfo(p, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
  return trimmed(std::move(s));
}

// "OpenCL 3.0 CUDA 13.0.88" -> 30; 0 when it does not parse.
ROSTER_INLINE unsigned parse_version(const std::string& text) {
  unsigned major = 0, minor = 0;
  if (std::sscanf(text.c_str(), "OpenCL %u.%u", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

ROSTER_INLINE bool has_extension(const std::string& extensions, std::string_view name) {
  std::istringstream words(extensions);
  for (std::string w; words >> w;)
    if (w == name) return true;
  return false;
}

ROSTER_INLINE device_type type_of(cl_device_id d) {
  const auto type = device_value<cl_device_type>(d, CL_DEVICE_TYPE);
  if (type & CL_DEVICE_TYPE_GPU)
    // Deprecated in 2.0 but still answered: whether the GPU shares host memory.
    return device_value<cl_bool>(d, CL_DEVICE_HOST_UNIFIED_MEMORY) ? device_type::integrated_gpu
                                                                    : device_type::discrete_gpu;
  if (type & CL_DEVICE_TYPE_CPU) return device_type::cpu;
  return device_type::other;  // accelerators (FPGAs, DSPs) and custom devices
}

// Fills the identity of one device; false when it is older than OpenCL 1.2.
ROSTER_INLINE bool describe(physical& p, bool f64_off) {
  const cl_device_id d = p.device;
  if (parse_version(device_text(d, CL_DEVICE_VERSION)) < 12) return false;
  const std::string extensions = device_text(d, CL_DEVICE_EXTENSIONS);
  adapter_info& a = p.info;
  a.backend = "opencl";
  a.name = device_text(d, CL_DEVICE_NAME);
  a.type = type_of(d);
  // A CPU device (PoCL, Intel's CPU runtime) implements OpenCL in software on
  // the host: without a record it never outranks the native CPU backend.
  a.software = a.type == device_type::cpu;
  if (has_extension(extensions, "cl_khr_device_uuid")) {
    cl_uchar uuid[CL_UUID_SIZE_KHR] = {};
    if (fn().clGetDeviceInfo(d, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, nullptr) == CL_SUCCESS)
      std::copy(std::begin(uuid), std::end(uuid), a.uuid.begin());
  }
  if (has_extension(extensions, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr pci{};
    if (fn().clGetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof pci, &pci, nullptr) == CL_SUCCESS) {
      char text[32];
      std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci.pci_domain, pci.pci_bus, pci.pci_device,
                    pci.pci_function);
      a.pci_address = text;
    }
  }
  // The PCI vendor id for a GPU (0x10de NVIDIA, 0x1002 AMD, 0x8086 Intel), so
  // vendor masks judge it as they judge the other APIs' adapters.
  a.vendor_id = device_value<cl_uint>(d, CL_DEVICE_VENDOR_ID);
  a.memory_bytes = device_value<cl_ulong>(d, CL_DEVICE_GLOBAL_MEM_SIZE);
  a.driver_version = device_text(d, CL_DRIVER_VERSION);
  a.compute_units = device_value<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS);
  a.native_grid_sync = false;  // OpenCL has no grid-wide barrier: the split runs each piece
  a.f64 = device_value<cl_device_fp_config>(d, CL_DEVICE_DOUBLE_FP_CONFIG) != 0 && !f64_off;
  a.ops = op_set::all();
  p.max_alloc = device_value<cl_ulong>(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  p.max_work_group = device_value<std::size_t>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
  return true;
}


ROSTER_INLINE std::string device_text(cl_device_id d, cl_device_info what) {
  std::size_t size = 0;
  if (fn().clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (fn().clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
  return trimmed(std::move(s));
}

ROSTER_INLINE expected<std::vector<physical>> physical_devices() {
  const auto& l = loader();
  if (l.failure) return *l.failure;
  // Test knob: ROSTER_OPENCL_NO_F64=1 treats every device as lacking double support.
  auto f64_off = env::flag("ROSTER_OPENCL_NO_F64");
  if (!f64_off) return std::move(f64_off).error().prepend("opencl");
  cl_uint count = 0;
  cl_int status = fn().clGetPlatformIDs(0, nullptr, &count);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when it finds no ICD file.
  if (status == CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS && count == 0)) return std::vector<physical>{};
  if (status != CL_SUCCESS) return cl_failure("opencl", "clGetPlatformIDs", status);
  std::vector<cl_platform_id> platforms(count);
  ROSTER_IMPL_CL_CALL("opencl", clGetPlatformIDs, count, platforms.data(), nullptr);

  std::vector<physical> out;
  for (cl_platform_id platform : platforms) {
    cl_uint n = 0;
    status = fn().clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (status == CL_DEVICE_NOT_FOUND || (status == CL_SUCCESS && n == 0)) continue;
    if (status != CL_SUCCESS) return cl_failure("opencl", "clGetDeviceIDs", status);
    std::vector<cl_device_id> devices(n);
    ROSTER_IMPL_CL_CALL("opencl", clGetDeviceIDs, platform, CL_DEVICE_TYPE_ALL, n, devices.data(), nullptr);
    const std::string version = platform_text(platform, CL_PLATFORM_VERSION);
    for (cl_device_id d : devices) {
      physical p;
      p.platform = platform;
      p.device = d;
      p.platform_version = parse_version(version);
      p.platform_name = platform_text(platform, CL_PLATFORM_NAME);
      if (!describe(p, f64_off->value_or(false))) continue;
      p.info.ordinal = static_cast<std::uint32_t>(out.size());
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace roster::opencl::detail
