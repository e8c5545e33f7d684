// A data race that ThreadSanitizer must report with tests/sanitizers/tsan.supp:
// a thread of this program writes a host-visible buffer while lavapipe reads
// it for vkCmdCopyBuffer, with nothing ordering the two. lavapipe is not
// instrumented, but its copy is a memcpy that TSan intercepts, so the report
// has our writer on one stack and a libvulkan_lvp.so frame on the other: the
// shape of a host write of ours racing lavapipe. The old suppression file
// (race:libvulkan_lvp.so, called_from_lib:libvulkan_lvp.so) hid exactly this.
//
// The race is certain, not timed: the writer hands over through relaxed atomics
// (no happens-before for TSan) and is joined only after the copy, so every run
// reports it. tsan_canary.py runs this and checks the verdict both ways.
//
// Exit: 0 when the copy happened and carried the bytes (TSan then exits 66 if
// it reported), 1 when the copy went wrong, 77 when no lavapipe device exists.
// `tsan_canary layer-lock` runs the shape of the race tsan.supp does keep.
#include <vulkan/vulkan.h>

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr VkDeviceSize bytes = 64 * 1024;

int fail(const char* what, VkResult r) {
  std::fprintf(stderr, "tsan_canary: %s failed (VkResult %d)\nFix: check the Vulkan loader and lavapipe "
               "(mesa-vulkan-drivers) with vulkaninfo\n", what, static_cast<int>(r));
  return 1;
}

#define CANARY_CHECK(call) \
  do { \
    if (VkResult r_ = (call); r_ != VK_SUCCESS) return fail(#call, r_); \
  } while (0)

std::atomic<int> written{0};   // relaxed only: TSan sees no order through it
std::atomic<int> copied{0};

std::uint8_t pattern(std::size_t i) { return static_cast<std::uint8_t>(i * 7 + 3); }

// The host side of the race, by name so the test can find it in the report.
[[gnu::noinline]] void canary_host_write(std::uint8_t* mapped) {
  for (std::size_t i = 0; i < bytes; ++i) mapped[i] = pattern(i);
  written.store(1, std::memory_order_relaxed);
  while (copied.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
}

struct buffer {
  VkBuffer handle = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* map = nullptr;
};

int make_buffer(VkPhysicalDevice phys, VkDevice dev, VkBufferUsageFlags usage, buffer& out) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  CANARY_CHECK(vkCreateBuffer(dev, &info, nullptr, &out.handle));
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(dev, out.handle, &req);
  VkPhysicalDeviceMemoryProperties props{};
  vkGetPhysicalDeviceMemoryProperties(phys, &props);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = UINT32_MAX;
  for (std::uint32_t i = 0; i < props.memoryTypeCount; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) {
      alloc.memoryTypeIndex = i;
      break;
    }
  if (alloc.memoryTypeIndex == UINT32_MAX) return fail("finding host-visible coherent memory", VK_ERROR_UNKNOWN);
  CANARY_CHECK(vkAllocateMemory(dev, &alloc, nullptr, &out.memory));
  CANARY_CHECK(vkBindBufferMemory(dev, out.handle, out.memory, 0));
  CANARY_CHECK(vkMapMemory(dev, out.memory, 0, VK_WHOLE_SIZE, 0, &out.map));
  return 0;
}

// The shape of the one race tsan.supp keeps (the validation layer's): a thread
// takes and releases a reader-writer lock, and another frees it, ordered only
// in ways TSan does not see. tsan_canary.py checks that the file suppresses
// this and nothing of the race above.
int layer_lock_shape() {
  auto* lock = new pthread_rwlock_t;
  pthread_rwlock_init(lock, nullptr);
  std::thread retire([lock] {
    pthread_rwlock_wrlock(lock);
    pthread_rwlock_unlock(lock);
    written.store(1, std::memory_order_relaxed);
    while (copied.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
  });
  while (written.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
  delete lock;  // no pthread_rwlock_destroy: the layer frees the block, as here
  copied.store(1, std::memory_order_relaxed);
  retire.join();
  std::printf("tsan_canary: a reader-writer lock freed with no order after its last unlock\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "layer-lock") == 0) return layer_lock_shape();
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tsan_canary";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  CANARY_CHECK(vkCreateInstance(&ici, nullptr, &instance));

  std::uint32_t count = 0;
  CANARY_CHECK(vkEnumeratePhysicalDevices(instance, &count, nullptr));
  std::vector<VkPhysicalDevice> devices(count);
  CANARY_CHECK(vkEnumeratePhysicalDevices(instance, &count, devices.data()));
  VkPhysicalDevice phys = VK_NULL_HANDLE;
  for (auto d : devices) {
    VkPhysicalDeviceProperties p{};
    vkGetPhysicalDeviceProperties(d, &p);
    if (std::strstr(p.deviceName, "llvmpipe") != nullptr) phys = d;
  }
  if (phys == VK_NULL_HANDLE) {
    std::fprintf(stderr, "tsan_canary: no lavapipe (llvmpipe) device among %u\nFix: install mesa-vulkan-drivers\n",
                 count);
    vkDestroyInstance(instance, nullptr);
    return 77;
  }

  std::uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &families, nullptr);
  std::vector<VkQueueFamilyProperties> fams(families);
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &families, fams.data());
  std::uint32_t family = UINT32_MAX;
  for (std::uint32_t i = 0; i < families && family == UINT32_MAX; ++i)
    if (fams[i].queueFlags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_TRANSFER_BIT)) family = i;
  if (family == UINT32_MAX) return fail("finding a queue family", VK_ERROR_UNKNOWN);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueFamilyIndex = family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkDevice dev = VK_NULL_HANDLE;
  CANARY_CHECK(vkCreateDevice(phys, &dci, nullptr, &dev));
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(dev, family, 0, &queue);

  buffer src, dst;
  if (int e = make_buffer(phys, dev, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, src); e != 0) return e;
  if (int e = make_buffer(phys, dev, VK_BUFFER_USAGE_TRANSFER_DST_BIT, dst); e != 0) return e;
  std::memset(dst.map, 0, bytes);

  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  CANARY_CHECK(vkCreateCommandPool(dev, &pci, nullptr, &pool));
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  CANARY_CHECK(vkAllocateCommandBuffers(dev, &cai, &cmd));
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  CANARY_CHECK(vkBeginCommandBuffer(cmd, &begin));
  const VkBufferCopy region{0, 0, bytes};
  vkCmdCopyBuffer(cmd, src.handle, dst.handle, 1, &region);
  CANARY_CHECK(vkEndCommandBuffer(cmd));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  CANARY_CHECK(vkCreateFence(dev, &fci, nullptr, &fence));

  // The race: the writer's stores and lavapipe's memcpy of the same bytes,
  // ordered only by relaxed atomics (the bytes do arrive; TSan sees no order).
  std::thread writer(canary_host_write, static_cast<std::uint8_t*>(src.map));
  while (written.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  VkResult submitted = vkQueueSubmit(queue, 1, &si, fence);
  if (submitted == VK_SUCCESS) submitted = vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX);
  copied.store(1, std::memory_order_relaxed);
  writer.join();
  if (submitted != VK_SUCCESS) return fail("vkQueueSubmit or vkWaitForFences", submitted);

  const auto* out = static_cast<const std::uint8_t*>(dst.map);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < bytes; ++i) wrong += out[i] != pattern(i);

  vkDestroyFence(dev, fence, nullptr);
  vkDestroyCommandPool(dev, pool, nullptr);
  for (buffer* b : {&src, &dst}) {
    vkUnmapMemory(dev, b->memory);
    vkDestroyBuffer(dev, b->handle, nullptr);
    vkFreeMemory(dev, b->memory, nullptr);
  }
  vkDestroyDevice(dev, nullptr);
  // The instance stays until exit, as roster's does: vkDestroyInstance unloads
  // lavapipe, and TSan ends a process that unloads a called_from_lib library,
  // so with the old file the canary would die there instead of passing.
  if (wrong != 0) {
    std::fprintf(stderr, "tsan_canary: %zu of %llu bytes did not arrive through vkCmdCopyBuffer\nFix: the copy "
                 "is what the canary watches; check lavapipe with vulkaninfo\n", wrong,
                 static_cast<unsigned long long>(bytes));
    return 1;
  }
  std::printf("tsan_canary: lavapipe copied %llu bytes written by another thread with no synchronisation\n",
              static_cast<unsigned long long>(bytes));
  return 0;
}
