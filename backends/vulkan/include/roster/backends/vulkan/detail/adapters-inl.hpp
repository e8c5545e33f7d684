#pragma once
// Adapter enumeration: the Vulkan 1.1 devices with a compute queue, with the
// identity circuits merge by (UUID, PCI address, type, driver).

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/adapters.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

namespace roster::vulkan::detail {

ROSTER_INLINE bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

ROSTER_INLINE std::string format_driver_version(std::uint32_t vendor, std::uint32_t v) {
  char out[64];
  if (vendor == 0x10de)  // NVIDIA packs 10.8.8.6 bits
    std::snprintf(out, sizeof out, "%u.%u.%u.%u", (v >> 22) & 0x3ff, (v >> 14) & 0xff, (v >> 6) & 0xff, v & 0x3f);
  else
    std::snprintf(out, sizeof out, "%u.%u.%u", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                  VK_API_VERSION_PATCH(v));
  return out;
}

// Picks the device's compute queue family, preferring one with timestamps
// (the first such); false when it has no compute queue.
ROSTER_INLINE bool compute_family(const vk_fns& fn, VkPhysicalDevice h, physical& p) {
  std::uint32_t nq = 0;
  fn.vkGetPhysicalDeviceQueueFamilyProperties(h, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> queues(nq);
  fn.vkGetPhysicalDeviceQueueFamilyProperties(h, &nq, queues.data());
  std::optional<std::uint32_t> family;
  for (std::uint32_t q = 0; q < nq; ++q) {
    if (!(queues[q].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (!family || (queues[*family].timestampValidBits == 0 && queues[q].timestampValidBits != 0)) family = q;
  }
  if (!family) return false;
  p.queue_family = *family;
  p.timestamp_bits = queues[*family].timestampValidBits;
  return true;
}


ROSTER_INLINE expected<std::vector<physical>> physical_devices() {
  const auto& v = instance();
  if (v.failure) return *v.failure;
  // Test knob: ROSTER_VULKAN_NO_F64 on treats every adapter as lacking shaderFloat64.
  auto no_f64 = env_flag("ROSTER_VULKAN_NO_F64", false);
  if (!no_f64) return std::move(no_f64).error();
  std::uint32_t n = 0;
  VkResult r = v.fn.vkEnumeratePhysicalDevices(v.instance, &n, nullptr);
  if (r == VK_ERROR_INITIALIZATION_FAILED) return std::vector<physical>{};  // no driver
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk_failure("vulkan", "vkEnumeratePhysicalDevices", r);
  std::vector<VkPhysicalDevice> handles(n);
  r = v.fn.vkEnumeratePhysicalDevices(v.instance, &n, handles.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk_failure("vulkan", "vkEnumeratePhysicalDevices", r);
  handles.resize(n);

  std::vector<physical> out;
  for (VkPhysicalDevice h : handles) {
    physical p;
    p.handle = h;
    v.fn.vkGetPhysicalDeviceProperties(h, &p.props);
    if (p.props.apiVersion < VK_API_VERSION_1_1) continue;  // compute needs 1.1 here
    if (!compute_family(v.fn, h, p)) continue;

    std::uint32_t ne = 0;
    r = v.fn.vkEnumerateDeviceExtensionProperties(h, nullptr, &ne, nullptr);
    if (r != VK_SUCCESS) return vk_failure("vulkan", "vkEnumerateDeviceExtensionProperties", r);
    std::vector<VkExtensionProperties> exts(ne);
    r = v.fn.vkEnumerateDeviceExtensionProperties(h, nullptr, &ne, exts.data());
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk_failure("vulkan", "vkEnumerateDeviceExtensionProperties", r);
    exts.resize(ne);

    VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props2.pNext = &id;
    void** tail = &id.pNext;
    const bool have_driver =
        p.props.apiVersion >= VK_API_VERSION_1_2 || has_extension(exts, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    const bool have_pci = has_extension(exts, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
    const bool have_sm = has_extension(exts, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
    if (have_driver) *tail = &driver, tail = &driver.pNext;
    if (have_pci) *tail = &pci, tail = &pci.pNext;
    if (have_sm) *tail = &sm, tail = &sm.pNext;
    v.fn.vkGetPhysicalDeviceProperties2(h, &props2);

    VkPhysicalDeviceFeatures features{};
    v.fn.vkGetPhysicalDeviceFeatures(h, &features);
    VkPhysicalDeviceMemoryProperties mem{};
    v.fn.vkGetPhysicalDeviceMemoryProperties(h, &mem);

    adapter_info& a = p.info;
    a.backend = "vulkan";
    a.ordinal = static_cast<std::uint32_t>(out.size());
    a.name = p.props.deviceName;
    switch (p.props.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: a.type = device_type::discrete_gpu; break;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: a.type = device_type::integrated_gpu; break;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: a.type = device_type::virtual_gpu; break;
      case VK_PHYSICAL_DEVICE_TYPE_CPU: a.type = device_type::cpu; break;
      default: a.type = device_type::other; break;
    }
    if (id.deviceUUID[0] != 0 || std::any_of(std::begin(id.deviceUUID), std::end(id.deviceUUID),
                                             [](std::uint8_t b) { return b != 0; }))
      std::copy(std::begin(id.deviceUUID), std::end(id.deviceUUID), a.uuid.begin());
    if (have_pci) {
      char text[32];
      std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci.pciDomain, pci.pciBus, pci.pciDevice,
                    pci.pciFunction);
      a.pci_address = text;
    }
    a.vendor_id = p.props.vendorID;
    a.device_id = p.props.deviceID;
    for (std::uint32_t i = 0; i < mem.memoryHeapCount; ++i)
      if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        a.memory_bytes = std::max<std::uint64_t>(a.memory_bytes, mem.memoryHeaps[i].size);
    a.driver_version = have_driver && driver.driverInfo[0] != '\0'
                           ? std::string(driver.driverInfo)
                           : format_driver_version(p.props.vendorID, p.props.driverVersion);
    if (have_sm) a.compute_units = sm.shaderSMCount;
    else if (a.type == device_type::cpu) a.compute_units = std::max(1u, std::thread::hardware_concurrency());
    a.native_grid_sync = false;
    // A CPU device is a software implementation (lavapipe, SwiftShader): the
    // native CPU backend leads its circuit unless a record says otherwise.
    a.software = p.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    a.f64 = features.shaderFloat64 == VK_TRUE && !*no_f64;
    a.ops = op_set::all();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace roster::vulkan::detail
