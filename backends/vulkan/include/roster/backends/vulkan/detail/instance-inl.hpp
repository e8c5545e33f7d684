#pragma once
// The Vulkan loader (dlopen), the instance with its validation layer and
// debug messenger, and the errors of failed Vulkan calls.

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/instance.hpp>

#include <roster/backends/vulkan/detail/testing.hpp>

#include <roster/env.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

namespace roster::vulkan::detail {

ROSTER_INLINE std::string_view result_name(VkResult r) noexcept {
  switch (r) {
#define ROSTER_IMPL_VK_RESULT(x) \
  case x: return #x;
    ROSTER_IMPL_VK_RESULT(VK_SUCCESS)
    ROSTER_IMPL_VK_RESULT(VK_NOT_READY)
    ROSTER_IMPL_VK_RESULT(VK_TIMEOUT)
    ROSTER_IMPL_VK_RESULT(VK_EVENT_SET)
    ROSTER_IMPL_VK_RESULT(VK_EVENT_RESET)
    ROSTER_IMPL_VK_RESULT(VK_INCOMPLETE)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_DEVICE_LOST)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_UNKNOWN)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_FRAGMENTATION)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    ROSTER_IMPL_VK_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
    ROSTER_IMPL_VK_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
#undef ROSTER_IMPL_VK_RESULT
    default: return "VkResult";
  }
}

// Returns "VK_ERROR_DEVICE_LOST (-4)".
ROSTER_INLINE std::string describe_result(VkResult r) {
  return std::string(result_name(r)) + " (" + std::to_string(static_cast<int>(r)) + ")";
}


ROSTER_INLINE roster::error vk_failure(std::string_view where, std::string_view function, VkResult r) {
  std::string what = std::string(where) + ": " + std::string(function) + " failed: " + describe_result(r);
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_TOO_MANY_OBJECTS:
      return roster::error(errc::out_of_memory, what,
                           "release buffers you no longer need or allocate smaller ones; check free device memory "
                           "(nvidia-smi)");
    case VK_ERROR_DEVICE_LOST:
      return roster::error(errc::device_fault, what,
                           "the GPU was reset or the driver failed: check dmesg and nvidia-smi, then open the "
                           "device again");
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
      return roster::error(errc::unavailable, what,
                           "install a Vulkan 1.1 driver (Debian: mesa-vulkan-drivers for lavapipe, or the NVIDIA "
                           "driver), check VK_DRIVER_FILES / VK_ICD_FILENAMES, " +
                               std::string(exclude_hint));
    case VK_ERROR_LAYER_NOT_PRESENT:
      return roster::error(errc::unavailable, what,
                           "install the Khronos validation layer (Debian: vulkan-validationlayers) or unset "
                           "ROSTER_VULKAN_VALIDATION");
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return roster::error(errc::unsupported, what,
                           "update the Vulkan driver, or pick another adapter with ROSTER_DEVICE_SELECTOR");
    default:
      return roster::error(errc::device_fault, what,
                           "rerun with ROSTER_VULKAN_VALIDATION=1 to see what the validation layer reports, and "
                           "report it as a roster bug with the driver version");
  }
}

ROSTER_INLINE expected<bool> env_flag(const char* name, bool unset) {
  auto v = env::flag(name);
  if (!v) return std::move(v).error().prepend("vulkan");
  return v->value_or(unset);
}

ROSTER_INLINE expected<std::vector<std::string>> loader_names() {
  // roster::env::library refuses a folder, a FIFO, a device or a socket
  // before dlopen sees it (dlopen would block on a FIFO); a missing file is
  // the same as no loader (dlopen says so).
  auto chosen = env::library("ROSTER_VULKAN_LOADER",
                             "point ROSTER_VULKAN_LOADER at the Vulkan loader's library file (e.g. "
                             "/usr/lib/x86_64-linux-gnu/libvulkan.so.1), or give a library name the dynamic linker "
                             "finds (libvulkan.so.1), or unset it to use the system's loader");
  if (!chosen) return std::move(chosen).error().prepend("vulkan");
  if (!*chosen) return std::vector<std::string>{"libvulkan.so.1", "libvulkan.so"};
  return std::vector<std::string>{std::move(**chosen)};
}

ROSTER_INLINE validation_log& vlog() {
  static validation_log* log = new validation_log;  // never destroyed: callbacks may run at exit
  return *log;
}


ROSTER_INLINE VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT types,
                                                const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  const bool counts = (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)) != 0 &&
                      (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)) != 0;
  if (!counts) return VK_FALSE;
  auto& log = vlog();
  std::string text = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error: " : "warning: ";
  text += data != nullptr && data->pMessage != nullptr ? data->pMessage : "(no message)";
  {
    std::lock_guard lock(log.mutex);
    if (log.messages.size() < 64) log.messages.push_back(text);
  }
  log.errors.fetch_add(1, std::memory_order_release);
  std::fprintf(stderr, "roster vulkan validation %s\n", text.c_str());
  return VK_FALSE;
}

// Opens the loader and its global functions; false (with v.failure set)
// when there is none usable.
ROSTER_INLINE bool load_loader(vk_instance& v) {
  // ROSTER_VULKAN_LOADER names the loader to use instead of the system's.
  auto loaders = loader_names();
  if (!loaders) {
    v.failure = std::move(loaders).error();
    return false;
  }
  const std::vector<std::string>& names = *loaders;
  // One name is ROSTER_VULKAN_LOADER's: the messages name the variable then.
  const std::string given =
      names.size() == 1 ? "ROSTER_VULKAN_LOADER='" + env::printable(names.front()) + "'" : std::string();
  for (const auto& name : names)
    if ((v.library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  if (v.library == nullptr) {
    const char* why = dlerror();
    v.absent = true;
    v.failure.emplace(errc::unavailable,
                      "vulkan: the Vulkan loader " + (given.empty() ? env::printable(names.front()) : given) +
                          " could not be loaded" + (why != nullptr ? " (" + env::printable(why) + ")" : std::string()),
                      "install the Vulkan loader (Debian: libvulkan1) and a driver, or point ROSTER_VULKAN_LOADER "
                      "at one, " +
                          std::string(exclude_hint));
    return false;
  }
  v.fn.vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(v.library, "vkGetInstanceProcAddr"));
  if (v.fn.vkGetInstanceProcAddr == nullptr) {
    v.absent = true;
    if (!given.empty())
      v.failure.emplace(errc::unavailable,
                        "vulkan: " + given + " names a library without vkGetInstanceProcAddr, so not a Vulkan loader",
                        "point ROSTER_VULKAN_LOADER at the Vulkan loader (e.g. "
                        "/usr/lib/x86_64-linux-gnu/libvulkan.so.1), or unset it to use the system's loader, " +
                            std::string(exclude_hint));
    else
      v.failure.emplace(errc::unavailable,
                        "vulkan: the Vulkan loader " + names.front() + " has no vkGetInstanceProcAddr",
                        "reinstall the Vulkan loader (Debian: libvulkan1), " + std::string(exclude_hint));
    return false;
  }
  auto& fn = v.fn;
#define ROSTER_IMPL_VK_LOAD_GLOBAL(name) \
  fn.name = reinterpret_cast<PFN_##name>(fn.vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
  ROSTER_IMPL_VK_GLOBAL_FNS(ROSTER_IMPL_VK_LOAD_GLOBAL)
  std::uint32_t loader_version = VK_API_VERSION_1_0;
  if (fn.vkEnumerateInstanceVersion != nullptr && fn.vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS)
    loader_version = VK_API_VERSION_1_0;
  if (fn.vkCreateInstance == nullptr || loader_version < VK_API_VERSION_1_1) {
    v.absent = true;
    v.failure.emplace(errc::unavailable, "vulkan: the Vulkan loader is older than 1.1",
                      "update the Vulkan loader (Debian: libvulkan1) to 1.1 or newer, " + std::string(exclude_hint));
    return false;
  }
  return true;
}

ROSTER_INLINE void make_instance(vk_instance& v) {
  if (!load_loader(v)) return;
  auto& fn = v.fn;
  std::vector<const char*> layers, extensions;
  auto validation = env_flag("ROSTER_VULKAN_VALIDATION", false);
  if (!validation) {
    v.failure = std::move(validation).error();
    return;
  }
  v.validation = *validation;
  if (v.validation) {
    std::uint32_t n = 0;
    std::vector<VkLayerProperties> props;
    VkResult r = fn.vkEnumerateInstanceLayerProperties(&n, nullptr);
    if (r == VK_SUCCESS) {
      props.resize(n);
      r = fn.vkEnumerateInstanceLayerProperties(&n, props.data());
      props.resize(r == VK_SUCCESS || r == VK_INCOMPLETE ? n : 0);
    }
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
      v.failure = vk_failure("vulkan", "vkEnumerateInstanceLayerProperties", r);
      return;
    }
    bool have = false;
    for (const auto& p : props) have = have || std::strcmp(p.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    if (!have) {
      v.failure.emplace(errc::unavailable,
                        "vulkan: ROSTER_VULKAN_VALIDATION is on but the layer VK_LAYER_KHRONOS_validation is not "
                        "installed",
                        "install the Khronos validation layer (Debian: vulkan-validationlayers) or unset "
                        "ROSTER_VULKAN_VALIDATION");
      return;
    }
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "roster";
  app.pEngineName = "roster";
  app.apiVersion = VK_API_VERSION_1_3;  // the highest we use if offered; 1.1 devices still work
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = &on_debug_message;
  // Synchronization validation checks the barriers between steps too.
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  features.pNext = &messenger_info;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (v.validation) info.pNext = &features;
  VkResult r = fn.vkCreateInstance(&info, nullptr, &v.instance);
  if (r != VK_SUCCESS) {
    // The loader answers VK_ERROR_INCOMPATIBLE_DRIVER when it finds no driver.
    v.absent = r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED;
    v.failure = vk_failure("vulkan", "vkCreateInstance", r);
    v.instance = VK_NULL_HANDLE;
    return;
  }
#define ROSTER_IMPL_VK_LOAD_INSTANCE(name) \
  fn.name = reinterpret_cast<PFN_##name>(fn.vkGetInstanceProcAddr(v.instance, #name));
  ROSTER_IMPL_VK_INSTANCE_FNS(ROSTER_IMPL_VK_LOAD_INSTANCE)
  ROSTER_IMPL_VK_DEBUG_FNS(ROSTER_IMPL_VK_LOAD_INSTANCE)
  // Device functions through the instance: one table for every device (the
  // loader's trampolines cost nothing next to a dispatch).
  ROSTER_IMPL_VK_DEVICE_FNS(ROSTER_IMPL_VK_LOAD_INSTANCE)
  if (v.validation && fn.vkCreateDebugUtilsMessengerEXT != nullptr) {
    r = fn.vkCreateDebugUtilsMessengerEXT(v.instance, &messenger_info, nullptr, &v.messenger);
    if (r != VK_SUCCESS) {
      v.failure = vk_failure("vulkan", "vkCreateDebugUtilsMessengerEXT", r);
      return;
    }
  }
}


ROSTER_INLINE const vk_instance& instance() {
  static vk_instance* v = [] {
    auto* p = new vk_instance;  // never destroyed, see above
    guard_mesa_shader_cache();
    make_instance(*p);
    return p;
  }();
  return *v;
}

ROSTER_INLINE expected<void> check_validation(std::uint64_t& seen, std::string_view where) {
  auto& log = vlog();
  const std::uint64_t now = log.errors.load(std::memory_order_acquire);
  if (now == seen) return {};
  seen = now;
  std::string last;
  {
    std::lock_guard lock(log.mutex);
    if (!log.messages.empty()) last = log.messages.back();
  }
  return make_error(errc::device_fault,
                    std::string(where) + ": the Vulkan validation layer reported a problem: " + last,
                    "this is a roster or driver bug: report it with the message above and the driver version");
}

}  // namespace roster::vulkan::detail

namespace roster::vulkan {

ROSTER_INLINE validation_report validation() {
  validation_report out;
  out.enabled = detail::instance().validation && detail::instance().instance != VK_NULL_HANDLE;
  auto& log = detail::vlog();
  out.errors = log.errors.load(std::memory_order_acquire);
  std::lock_guard lock(log.mutex);
  out.messages = log.messages;
  return out;
}

namespace detail {

ROSTER_INLINE bool inject_validation_message(std::string_view text) {
  const auto& v = instance();
  if (!v.validation || v.instance == VK_NULL_HANDLE || v.fn.vkSubmitDebugUtilsMessageEXT == nullptr) return false;
  const std::string message(text);
  VkDebugUtilsMessengerCallbackDataEXT data{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT};
  data.pMessageIdName = "roster-test";
  data.pMessage = message.c_str();
  v.fn.vkSubmitDebugUtilsMessageEXT(v.instance, VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, &data);
  return true;
}

}  // namespace detail
}  // namespace roster::vulkan
