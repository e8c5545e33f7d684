// Native handles on the Vulkan backend (lavapipe in CI, validation on): a
// user's own compute shader reads and writes roster buffers between two
// roster programs, submitted through the handles' submit() and by hand on
// roster's queue, with no wait in between; synchronize() covers the user's
// work; asking for another backend's handles is an error naming both.
#define VK_NO_PROTOTYPES
#include <roster/acquire.hpp>
#include <roster/backends/cpu.hpp>
#include <roster/backends/vulkan.hpp>
#include <roster/backends/vulkan/native.hpp>
#include <roster/native.hpp>

#include "native_user.spv.h"  // tests/backends/native_user.comp, compiled at build time

#include <gtest/gtest.h>

#include "../support/vulkan_validation.hpp"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {


void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
}

void expect_names(const roster::error& e, std::initializer_list<const char*> words) {
  for (const char* w : words) EXPECT_NE(e.what().find(w), std::string::npos) << "no '" << w << "' in: " << e.message();
}

std::unique_ptr<roster::device> open_vulkan() {
  auto d = roster::acquire("vulkan:0");
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : nullptr;
}

#define ROSTER_TEST_VK_OK(call) ASSERT_EQ((call), VK_SUCCESS) << #call

// What a user's own Vulkan code sets up on roster's device, every function
// loaded through the handles' vkGetInstanceProcAddr.
struct user_shader {
  const roster::vulkan::native& h;
#define ROSTER_TEST_VK_FNS(X)                                                                                   \
  X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout)                               \
  X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)                          \
  X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool)         \
  X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline)                \
  X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdSetEvent)    \
  X(vkCreateEvent) X(vkDestroyEvent) X(vkGetEventStatus) X(vkCreateFence) X(vkDestroyFence) X(vkGetFenceStatus) \
  X(vkQueueSubmit)
#define ROSTER_TEST_VK_MEMBER(name) PFN_##name name = nullptr;
  ROSTER_TEST_VK_FNS(ROSTER_TEST_VK_MEMBER)
  PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr = nullptr;

  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkCommandPool commands = VK_NULL_HANDLE;

  explicit user_shader(const roster::vulkan::native& handles) : h(handles) {}
  user_shader(const user_shader&) = delete;

  void load() {
    ASSERT_NE(h.get_instance_proc_addr, nullptr);
    vkGetDeviceProcAddr =
        reinterpret_cast<PFN_vkGetDeviceProcAddr>(h.get_instance_proc_addr(h.instance, "vkGetDeviceProcAddr"));
    ASSERT_NE(vkGetDeviceProcAddr, nullptr);
#define ROSTER_TEST_VK_LOAD(name)                                                 \
  name = reinterpret_cast<PFN_##name>(vkGetDeviceProcAddr(h.device, #name));      \
  ASSERT_NE(name, nullptr) << #name;
    ROSTER_TEST_VK_FNS(ROSTER_TEST_VK_LOAD)

    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = sizeof roster_spv_native_user;
    mi.pCode = roster_spv_native_user;
    ROSTER_TEST_VK_OK(vkCreateShaderModule(h.device, &mi, nullptr, &module));
    VkDescriptorSetLayoutBinding bindings[2] = {};
    for (std::uint32_t i = 0; i < 2; ++i) {
      bindings[i].binding = i;
      bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      bindings[i].descriptorCount = 1;
      bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = 2;
    li.pBindings = bindings;
    ROSTER_TEST_VK_OK(vkCreateDescriptorSetLayout(h.device, &li, nullptr, &set_layout));
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(std::uint32_t)};
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &range;
    ROSTER_TEST_VK_OK(vkCreatePipelineLayout(h.device, &pli, nullptr, &layout));
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.layout = layout;
    ROSTER_TEST_VK_OK(vkCreateComputePipelines(h.device, VK_NULL_HANDLE, 1, &ci, nullptr, &pipeline));
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 8};
    VkDescriptorPoolCreateInfo dpi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 4;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &size;
    ROSTER_TEST_VK_OK(vkCreateDescriptorPool(h.device, &dpi, nullptr, &pool));
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.queueFamilyIndex = h.queue_family;
    ROSTER_TEST_VK_OK(vkCreateCommandPool(h.device, &cpi, nullptr, &commands));
  }

  // Records y = 3y + x + i % 7 over n elements into a new command buffer;
  // `leading_barrier` makes roster's earlier writes visible (needed when the
  // user submits by hand), `event` is set when the work is done.
  void record(const roster::vulkan::native::buffer& x, const roster::vulkan::native::buffer& y, std::uint32_t n,
              bool leading_barrier, VkEvent event, VkCommandBuffer& cmd) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    ROSTER_TEST_VK_OK(vkAllocateDescriptorSets(h.device, &ai, &set));
    const VkDescriptorBufferInfo infos[2] = {{x.buffer, x.offset, x.size}, {y.buffer, y.offset, y.size}};
    VkWriteDescriptorSet writes[2] = {};
    for (std::uint32_t i = 0; i < 2; ++i) {
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstSet = set;
      writes[i].dstBinding = i;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(h.device, 2, writes, 0, nullptr);
    VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = commands;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    ROSTER_TEST_VK_OK(vkAllocateCommandBuffers(h.device, &cai, &cmd));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    ROSTER_TEST_VK_OK(vkBeginCommandBuffer(cmd, &bi));
    if (leading_barrier) {
      VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
      mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    }
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof n, &n);
    vkCmdDispatch(cmd, (n + 63) / 64, 1, 1);
    if (event != VK_NULL_HANDLE) vkCmdSetEvent(cmd, event, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    ROSTER_TEST_VK_OK(vkEndCommandBuffer(cmd));
  }

  ~user_shader() {
    // The caller synchronized the device first: nothing of ours is in flight.
    if (h.device == VK_NULL_HANDLE || vkDestroyCommandPool == nullptr) return;
    if (commands) vkDestroyCommandPool(h.device, commands, nullptr);
    if (pool) vkDestroyDescriptorPool(h.device, pool, nullptr);
    if (pipeline) vkDestroyPipeline(h.device, pipeline, nullptr);
    if (layout) vkDestroyPipelineLayout(h.device, layout, nullptr);
    if (set_layout) vkDestroyDescriptorSetLayout(h.device, set_layout, nullptr);
    if (module) vkDestroyShaderModule(h.device, module, nullptr);
  }
};

TEST(vulkan_native, handles_name_roster_s_instance_device_and_queue) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  auto h = roster::native<roster::vulkan::native>(*d);  // through the grid-sync split acquire applied
  ASSERT_TRUE(h) << h.error().message();
  EXPECT_NE(h->instance, VK_NULL_HANDLE);
  EXPECT_NE(h->physical_device, VK_NULL_HANDLE);
  EXPECT_NE(h->device, VK_NULL_HANDLE);
  EXPECT_NE(h->queue, VK_NULL_HANDLE);
  EXPECT_NE(h->queue_mutex, nullptr);
  EXPECT_GE(h->api_version, static_cast<std::uint32_t>(VK_API_VERSION_1_1));
  ASSERT_NE(h->get_instance_proc_addr, nullptr);
  // The handles are live: the physical device's properties name the adapter.
  auto props = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(
      h->get_instance_proc_addr(h->instance, "vkGetPhysicalDeviceProperties"));
  ASSERT_NE(props, nullptr);
  VkPhysicalDeviceProperties p{};
  props(h->physical_device, &p);
  EXPECT_EQ(std::string(p.deviceName), d->adapter().name);
  auto b = d->allocate<float>(1000);
  ASSERT_TRUE(b);
  auto hb = roster::native_buffer<roster::vulkan::native>(*d, *b);
  ASSERT_TRUE(hb) << hb.error().message();
  EXPECT_NE(hb->buffer, VK_NULL_HANDLE);
  EXPECT_NE(hb->memory, VK_NULL_HANDLE);
  EXPECT_EQ(hb->offset, 0u);
  EXPECT_EQ(hb->size, 4000u);
  EXPECT_EQ(hb->type, roster::element_type::f32);
  EXPECT_EQ(hb->elements, 1000u);
}

// The reference the user's shader and roster's programs produce together.
float expected_y(std::size_t i) { return 7.0f * static_cast<float>(i) + static_cast<float>(i % 7); }

void check_exact(const std::vector<float>& got, float (*want)(std::size_t), const char* what) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want(i) && wrong++ < 5) ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", want " << want(i);
  EXPECT_EQ(wrong, 0u) << what;
}

// roster writes y = 2x, the user's shader makes y = 3y + x + i % 7 = 7i + i % 7,
// roster adds z = y + x; no synchronize() between the three.
void run_between_programs(bool by_hand) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  constexpr std::size_t n = 100003;  // not a multiple of the workgroups
  auto x = d->allocate<float>(n), y = d->allocate<float>(n), z = d->allocate<float>(n);
  ASSERT_TRUE(x && y && z);
  std::vector<float> xs(n);
  for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<float>(i);
  ASSERT_TRUE(d->upload<float>(*x, xs));

  auto h = roster::native<roster::vulkan::native>(*d);
  auto hx = roster::native_buffer<roster::vulkan::native>(*d, *x);
  auto hy = roster::native_buffer<roster::vulkan::native>(*d, *y);
  ASSERT_TRUE(h && hx && hy);
  user_shader user(*h);
  ASSERT_NO_FATAL_FAILURE(user.load());
  VkFence fence = VK_NULL_HANDLE;
  if (by_hand) {
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    ROSTER_TEST_VK_OK(user.vkCreateFence(h->device, &fi, nullptr, &fence));
  }
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  ASSERT_NO_FATAL_FAILURE(user.record(*hx, *hy, static_cast<std::uint32_t>(n), by_hand, VK_NULL_HANDLE, cmd));

  roster::program first;
  first.mul(*y, *x, 2.0);
  ASSERT_TRUE(d->dispatch(first));
  if (by_hand) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    auto lock = h->lock_queue();
    ROSTER_TEST_VK_OK(user.vkQueueSubmit(h->queue, 1, &si, fence));
  } else {
    auto ok = h->submit(cmd);
    ASSERT_TRUE(ok) << ok.error().message();
  }
  roster::program second;
  second.add(*z, *y, *x);
  ASSERT_TRUE(d->dispatch(second));
  ASSERT_TRUE(d->synchronize());
  if (by_hand) {
    EXPECT_EQ(user.vkGetFenceStatus(h->device, fence), VK_SUCCESS);
    user.vkDestroyFence(h->device, fence, nullptr);
  }

  std::vector<float> ys(n), zs(n);
  ASSERT_TRUE(d->download<float>(*y, ys));
  ASSERT_TRUE(d->download<float>(*z, zs));
  check_exact(ys, expected_y, "y");
  check_exact(zs, [](std::size_t i) { return expected_y(i) + static_cast<float>(i); }, "z");
}

TEST(vulkan_native, a_user_shader_submitted_through_the_handles_runs_between_two_programs) {
  run_between_programs(false);
}

TEST(vulkan_native, a_user_shader_submitted_by_hand_on_roster_s_queue_runs_between_two_programs) {
  run_between_programs(true);
}

// Submitted last, after every roster program: synchronize() still waits for it.
TEST(vulkan_native, synchronize_waits_for_a_user_submission) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  constexpr std::size_t n = 1 << 20;
  auto x = d->allocate<float>(n), y = d->allocate<float>(n);
  ASSERT_TRUE(x && y);
  roster::program fill;
  fill.fill(*x, 1.0).fill(*y, 2.0);
  ASSERT_TRUE(d->dispatch(fill));
  auto h = roster::native<roster::vulkan::native>(*d);
  auto hx = roster::native_buffer<roster::vulkan::native>(*d, *x);
  auto hy = roster::native_buffer<roster::vulkan::native>(*d, *y);
  ASSERT_TRUE(h && hx && hy);
  user_shader user(*h);
  ASSERT_NO_FATAL_FAILURE(user.load());
  VkEventCreateInfo ei{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
  VkEvent event = VK_NULL_HANDLE;
  ROSTER_TEST_VK_OK(user.vkCreateEvent(h->device, &ei, nullptr, &event));
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  ASSERT_NO_FATAL_FAILURE(user.record(*hx, *hy, static_cast<std::uint32_t>(n), false, event, cmd));
  ASSERT_TRUE(h->submit(cmd));
  ASSERT_TRUE(d->synchronize());
  EXPECT_EQ(user.vkGetEventStatus(h->device, event), VK_EVENT_SET);
  user.vkDestroyEvent(h->device, event, nullptr);
  // And the shader's result: y = 3 * 2 + 1 + i % 7.
  std::vector<float> ys(n);
  ASSERT_TRUE(d->download<float>(*y, ys));
  check_exact(ys, [](std::size_t i) { return 7.0f + static_cast<float>(i % 7); }, "y");
}

// --- Synchronization validation across submissions ---------------------------
// lavapipe runs submissions in order, so a missing barrier between roster's
// work and a user's command buffer gives right results there; only the
// validation layer's synchronization validation across submissions
// (tests/support/vulkan_validation.hpp turns it on) sees it. Each test below
// fails with a SYNC-HAZARD message when the barrier it covers is removed:
// the one submit() puts before the user's command buffer (native.cpp), the
// one every roster program begins with (dispatch.cpp), and the one every
// roster transfer begins with (device.cpp).

// The validation layer's SYNC-HAZARD messages after the first `from`.
std::vector<std::string> sync_hazards(std::size_t from) {
  const auto report = roster::vulkan::validation();
  std::vector<std::string> out;
  for (std::size_t i = from; i < report.messages.size(); ++i)
    if (report.messages[i].find("SYNC-HAZARD") != std::string::npos) out.push_back(report.messages[i]);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

#define ROSTER_TEST_NEEDS_VALIDATION()                                                                  \
  if (!roster::vulkan::validation().enabled)                                                            \
  GTEST_SKIP() << "the validation layer is off (ROSTER_VULKAN_VALIDATION=1 and the Khronos layer turn it " \
                  "on): without it nothing here can see a missing barrier"

// The buffers and the user's pipeline the tests below share: x[i] = i, y = 0
// written by roster and complete (synchronize()) before each test's own steps.
struct sync_case {
  static constexpr std::size_t n = 4099;
  std::unique_ptr<roster::device> d;
  std::optional<roster::buffer> x, y, z;
  roster::vulkan::native h;
  roster::vulkan::native::buffer hx, hy, hz;

  void open() {
    d = open_vulkan();
    ASSERT_TRUE(d);
    auto bx = d->allocate<float>(n), by = d->allocate<float>(n), bz = d->allocate<float>(n);
    ASSERT_TRUE(bx && by && bz);
    x = *bx, y = *by, z = *bz;
    std::vector<float> xs(n);
    for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<float>(i);
    ASSERT_TRUE(d->upload<float>(*x, xs));
    roster::program zero;
    zero.fill(*y, 0.0).fill(*z, 0.0);
    ASSERT_TRUE(d->dispatch(zero));
    ASSERT_TRUE(d->synchronize());
    auto nh = roster::native<roster::vulkan::native>(*d);
    auto nx = roster::native_buffer<roster::vulkan::native>(*d, *x);
    auto ny = roster::native_buffer<roster::vulkan::native>(*d, *y);
    auto nz = roster::native_buffer<roster::vulkan::native>(*d, *z);
    ASSERT_TRUE(nh && nx && ny && nz);
    h = *nh, hx = *nx, hy = *ny, hz = *nz;
  }
};

// roster's program writes z; the user's shader, submitted right after with
// no host wait, reads z (as its x) and writes y: without submit()'s barrier
// the layer reports a read-after-write hazard.
TEST(vulkan_native_sync, a_roster_write_then_a_user_read_through_submit_has_no_sync_hazard) {
  ROSTER_TEST_NEEDS_VALIDATION();
  sync_case c;
  ASSERT_NO_FATAL_FAILURE(c.open());
  user_shader user(c.h);
  ASSERT_NO_FATAL_FAILURE(user.load());
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  ASSERT_NO_FATAL_FAILURE(user.record(c.hz, c.hy, static_cast<std::uint32_t>(c.n), false, VK_NULL_HANDLE, cmd));
  const std::size_t from = roster::vulkan::validation().messages.size();

  roster::program write;
  write.mul(*c.z, *c.x, 2.0);  // z = 2i
  ASSERT_TRUE(c.d->dispatch(write));
  auto ok = c.h.submit(cmd);  // y = 3 * 0 + 2i + i % 7
  EXPECT_TRUE(ok) << ok.error().message();
  EXPECT_TRUE(c.d->synchronize());
  const auto hazards = sync_hazards(from);
  EXPECT_TRUE(hazards.empty()) << joined(hazards);
  std::vector<float> ys(c.n);
  ASSERT_TRUE(c.d->download<float>(*c.y, ys));
  check_exact(ys, [](std::size_t i) { return 2.0f * static_cast<float>(i) + static_cast<float>(i % 7); }, "y");
}

// The user's shader writes y; roster's next program, dispatched with no host
// wait, reads it: without the barrier roster's command buffers begin with
// the layer reports a read-after-write hazard at roster's submission.
TEST(vulkan_native_sync, a_user_write_through_submit_then_a_roster_read_has_no_sync_hazard) {
  ROSTER_TEST_NEEDS_VALIDATION();
  sync_case c;
  ASSERT_NO_FATAL_FAILURE(c.open());
  user_shader user(c.h);
  ASSERT_NO_FATAL_FAILURE(user.load());
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  ASSERT_NO_FATAL_FAILURE(user.record(c.hx, c.hy, static_cast<std::uint32_t>(c.n), false, VK_NULL_HANDLE, cmd));
  const std::size_t from = roster::vulkan::validation().messages.size();

  auto ok = c.h.submit(cmd);  // y = 0 + i + i % 7; roster's earlier work is complete
  EXPECT_TRUE(ok) << ok.error().message();
  roster::program read;
  read.add(*c.z, *c.y, *c.x);  // z = 2i + i % 7
  auto ran = c.d->dispatch(read);
  EXPECT_TRUE(ran) << ran.error().message();
  EXPECT_TRUE(c.d->synchronize());
  const auto hazards = sync_hazards(from);
  EXPECT_TRUE(hazards.empty()) << joined(hazards);
  std::vector<float> zs(c.n);
  ASSERT_TRUE(c.d->download<float>(*c.z, zs));
  check_exact(zs, [](std::size_t i) { return 2.0f * static_cast<float>(i) + static_cast<float>(i % 7); }, "z");
}

// The user's shader writes y and roster downloads it (a read after the
// shader's write); again, and roster uploads into x, which the shader read (a
// write after a read); no host wait in between. The barrier each roster
// transfer begins with (device.cpp) orders both, or the layer reports a
// hazard. (Each transfer waits for its own fence, which orders everything
// before it: hence one user submission before each.)
TEST(vulkan_native_sync, a_user_shader_through_submit_then_roster_transfers_have_no_sync_hazard) {
  ROSTER_TEST_NEEDS_VALIDATION();
  sync_case c;
  ASSERT_NO_FATAL_FAILURE(c.open());
  user_shader user(c.h);
  ASSERT_NO_FATAL_FAILURE(user.load());
  VkCommandBuffer first = VK_NULL_HANDLE, second = VK_NULL_HANDLE;
  ASSERT_NO_FATAL_FAILURE(user.record(c.hx, c.hy, static_cast<std::uint32_t>(c.n), false, VK_NULL_HANDLE, first));
  ASSERT_NO_FATAL_FAILURE(user.record(c.hx, c.hy, static_cast<std::uint32_t>(c.n), false, VK_NULL_HANDLE, second));
  const std::size_t from = roster::vulkan::validation().messages.size();

  auto ok = c.h.submit(first);  // y = 0 + i + i % 7
  EXPECT_TRUE(ok) << ok.error().message();
  std::vector<float> ys(c.n);
  auto down = c.d->download<float>(*c.y, ys);
  EXPECT_TRUE(down) << down.error().message();
  check_exact(ys, [](std::size_t i) { return static_cast<float>(i) + static_cast<float>(i % 7); }, "y");

  ok = c.h.submit(second);  // y = 4 (i + i % 7)
  EXPECT_TRUE(ok) << ok.error().message();
  const std::vector<float> ones(c.n, 1.0f);
  auto up = c.d->upload<float>(*c.x, ones);
  EXPECT_TRUE(up) << up.error().message();
  const auto hazards = sync_hazards(from);
  EXPECT_TRUE(hazards.empty()) << joined(hazards);
  ASSERT_TRUE(c.d->download<float>(*c.y, ys));
  check_exact(ys, [](std::size_t i) { return 4.0f * (static_cast<float>(i) + static_cast<float>(i % 7)); }, "y");
}

// Runs in a child process (its messages would fail this one's end check):
// the same roster write and user read as above, the user's command buffer
// submitted by hand with no barrier of its own. Exits 0 when the layer
// reported a hazard.
void submit_by_hand_without_a_barrier() {
  sync_case c;
  c.open();
  user_shader user(c.h);
  user.load();
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  user.record(c.hz, c.hy, static_cast<std::uint32_t>(c.n), false, VK_NULL_HANDLE, cmd);
  roster::program write;
  write.mul(*c.z, *c.x, 2.0);
  if (!c.d->dispatch(write)) std::_Exit(2);
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  {
    auto lock = c.h.lock_queue();
    if (user.vkQueueSubmit(c.h.queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS) std::_Exit(3);
  }
  (void)c.d->synchronize();  // fails: it reports the layer's message
  std::_Exit(sync_hazards(0).empty() ? 1 : 0);
}

// The control that makes the two tests above mean something: the layer, as
// these tests set it up, does see a barrier missing between submissions.
TEST(vulkan_native_sync, the_layer_reports_a_missing_barrier_between_submissions) {
  ROSTER_TEST_NEEDS_VALIDATION();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts afresh: no Vulkan state forked
  EXPECT_EXIT(submit_by_hand_without_a_barrier(), ::testing::ExitedWithCode(0), "SYNC-HAZARD-");
}

TEST(vulkan_native, a_null_command_buffer_is_an_error_with_a_fix) {
  auto d = open_vulkan();
  ASSERT_TRUE(d);
  auto h = roster::native<roster::vulkan::native>(*d);
  ASSERT_TRUE(h);
  auto ok = h->submit(VK_NULL_HANDLE);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), roster::errc::invalid_argument);
  expect_fix(ok.error());
}

TEST(vulkan_native, another_backend_s_handles_are_an_error_naming_both) {
  auto v = open_vulkan();
  ASSERT_TRUE(v);
  auto c = roster::acquire("cpu");
  ASSERT_TRUE(c) << c.error().message();
  auto vb = v->allocate<float>(16);
  auto cb = (*c)->allocate<float>(16);
  ASSERT_TRUE(vb && cb);

  auto as_cpu = roster::native<roster::cpu::native>(*v);
  ASSERT_FALSE(as_cpu);
  EXPECT_EQ(as_cpu.error().code(), roster::errc::invalid_argument);
  expect_names(as_cpu.error(), {"vulkan:0", "asked for cpu handles", "vulkan device"});
  EXPECT_NE(as_cpu.error().fix().find("roster::vulkan::native"), std::string::npos) << as_cpu.error().message();
  expect_fix(as_cpu.error());

  auto as_vulkan = roster::native<roster::vulkan::native>(**c);
  ASSERT_FALSE(as_vulkan);
  EXPECT_EQ(as_vulkan.error().code(), roster::errc::invalid_argument);
  expect_names(as_vulkan.error(), {"asked for vulkan handles", "cpu device"});
  expect_fix(as_vulkan.error());

  auto buf_as_cpu = roster::native_buffer<roster::cpu::native>(*v, *vb);
  ASSERT_FALSE(buf_as_cpu);
  expect_names(buf_as_cpu.error(), {"cpu", "vulkan"});
  expect_fix(buf_as_cpu.error());

  // A CPU buffer handed to the Vulkan device.
  auto foreign = roster::native_buffer<roster::vulkan::native>(*v, *cb);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), roster::errc::invalid_argument);
  expect_names(foreign.error(), {"another device", "vulkan"});
  expect_fix(foreign.error());

  ASSERT_TRUE(v->release(*vb));
  auto released = roster::native_buffer<roster::vulkan::native>(*v, *vb);
  ASSERT_FALSE(released);
  EXPECT_EQ(released.error().code(), roster::errc::invalid_argument);
  expect_names(released.error(), {"not live", "vulkan"});
  expect_fix(released.error());
}

}  // namespace
