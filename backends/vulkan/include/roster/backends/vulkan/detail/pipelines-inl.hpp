#pragma once
// The Vulkan device's compute pipelines: the descriptor and pipeline
// layouts, and one pipeline per op, element type and width, built from the
// committed SPIR-V headers (include/roster/backends/vulkan/detail/spirv/, made
// from shaders/*.comp by scripts/regen-spirv; the op is a specialization constant).

#include <roster/backends/vulkan.hpp>

#include <roster/backends/vulkan/detail/device.hpp>

#include <chrono>

#include <roster/backends/vulkan/detail/spirv/dot_f32.spv.h>
#include <roster/backends/vulkan/detail/spirv/dot_f32x4.spv.h>
#include <roster/backends/vulkan/detail/spirv/dot_f64.spv.h>
#include <roster/backends/vulkan/detail/spirv/dot_f64x2.spv.h>
#include <roster/backends/vulkan/detail/spirv/stream_f32.spv.h>
#include <roster/backends/vulkan/detail/spirv/stream_f32x4.spv.h>
#include <roster/backends/vulkan/detail/spirv/stream_f64.spv.h>
#include <roster/backends/vulkan/detail/spirv/stream_f64x2.spv.h>

namespace roster::vulkan {

using namespace detail;

// Builds the layouts and every pipeline; device::init calls it once.
ROSTER_INLINE expected<void> device::make_pipelines() {
  VkDescriptorSetLayoutBinding bindings[4];
  for (std::uint32_t i = 0; i < 4; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = 4;
  set_info.pBindings = bindings;
  ROSTER_IMPL_VK_CALL(where("open"), vkCreateDescriptorSetLayout, device_, &set_info, nullptr, &set_layout_);
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push_constants)};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout_;
  layout_info.pushConstantRangeCount = 1;
  layout_info.pPushConstantRanges = &range;
  ROSTER_IMPL_VK_CALL(where("open"), vkCreatePipelineLayout, device_, &layout_info, nullptr, &pipeline_layout_);

  // Test and tuning knob: ROSTER_VULKAN_VECTOR off keeps one element per invocation.
  auto vectors = env_flag("ROSTER_VULKAN_VECTOR", true);
  if (!vectors) return std::move(vectors).error();
  vectors_ = *vectors;
  const auto began = std::chrono::steady_clock::now();
  const spirv f32[4] = {{roster_spv_stream_f32, sizeof roster_spv_stream_f32},
                        {roster_spv_stream_f32x4, sizeof roster_spv_stream_f32x4},
                        {roster_spv_dot_f32, sizeof roster_spv_dot_f32},
                        {roster_spv_dot_f32x4, sizeof roster_spv_dot_f32x4}};
  if (auto ok = make_pipelines(f32, pipelines_[0]); !ok) return ok;
  if (p_.info.f64) {
    const spirv f64[4] = {{roster_spv_stream_f64, sizeof roster_spv_stream_f64},
                          {roster_spv_stream_f64x2, sizeof roster_spv_stream_f64x2},
                          {roster_spv_dot_f64, sizeof roster_spv_dot_f64},
                          {roster_spv_dot_f64x2, sizeof roster_spv_dot_f64x2}};
    if (auto ok = make_pipelines(f64, pipelines_[1]); !ok) return ok;
  }
  loaded_.ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began).count();
  loaded_.how = "vkCreateComputePipelines: " + std::to_string(pipelines_made_) +
                " pipelines from the committed SPIR-V, at open";
  return {};
}

// Builds the pipelines of one element type from its four modules: stream
// scalar, stream vector, dot scalar, dot vector (partial phase only).
ROSTER_INLINE expected<void> device::make_pipelines(const spirv (&code)[4], pipeline_set& out) {
  VkShaderModule modules[4] = {};
  expected<void> result;
  for (int m = 0; m < 4 && result; ++m) {
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code[m].bytes;
    info.pCode = code[m].code;
    if (VkResult r = fn_.vkCreateShaderModule(device_, &info, nullptr, &modules[m]); r != VK_SUCCESS)
      result = vk_failure(where("open"), "vkCreateShaderModule", r);
  }
  auto make = [&](VkShaderModule module, std::uint32_t value, VkPipeline& target) {
    if (!result) return;
    VkSpecializationMapEntry entry{0, 0, sizeof value};
    VkSpecializationInfo spec{1, &entry, sizeof value, &value};
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = &spec;
    info.layout = pipeline_layout_;
    if (VkResult r = fn_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &target);
        r != VK_SUCCESS)
      result = vk_failure(where("open"), "vkCreateComputePipelines", r);
    else
      ++pipelines_made_;
  };
  for (std::uint32_t v = 0; v < 2; ++v)
    for (std::uint32_t o = 0; o < 6; ++o) make(modules[v], o, out.stream[v][o]);
  make(modules[2], 0, out.dot[0][0]);
  make(modules[2], 1, out.dot[0][1]);
  make(modules[3], 0, out.dot[1][0]);
  for (auto m : modules)
    if (m != VK_NULL_HANDLE) fn_.vkDestroyShaderModule(device_, m, nullptr);
  return result;
}

// Builds a user kernel's layouts and pipeline from its SPIR-V, once.
ROSTER_INLINE expected<const device::user_pipeline*> device::user_pipeline_for(const kernel_entry& entry) {
  if (auto it = user_pipelines_.find(&entry); it != user_pipelines_.end()) return &it->second;
  const std::string what = "kernel '" + std::string(entry.op) + "' (variant '" + std::string(entry.variant) + "')";
  const shader* code = entry.payload_as<shader>();
  if (code == nullptr || code->code.empty() || code->local_size_x == 0)
    return make_error(errc::invalid_argument, where("dispatch") + ": " + what + " has no SPIR-V or no local size",
                      "register it with roster::vulkan::kernel, giving a shader with its words and local_size_x");
  user_pipeline u;
  for (const auto& p : entry.signature) u.buffers += p.is_buffer ? 1 : 0;
  u.push_bytes = user_push_bytes(entry.signature);
  if (u.push_bytes > p_.props.limits.maxPushConstantsSize)
    return make_error(errc::unsupported,
                      where("dispatch") + ": " + what + " needs " + std::to_string(u.push_bytes) +
                          " bytes of push constants, the device allows " +
                          std::to_string(p_.props.limits.maxPushConstantsSize),
                      "pass fewer scalars, or put them in a buffer");
  std::vector<VkDescriptorSetLayoutBinding> bindings(u.buffers);
  for (std::uint32_t i = 0; i < u.buffers; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  expected<void> result;
  auto fail = [&](const char* call, VkResult r) { result = vk_failure(where("dispatch") + ": " + what, call, r); };
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = u.buffers;
  set_info.pBindings = bindings.data();
  if (VkResult r = fn_.vkCreateDescriptorSetLayout(device_, &set_info, nullptr, &u.set_layout); r != VK_SUCCESS)
    fail("vkCreateDescriptorSetLayout", r);
  if (result) {
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, u.push_bytes};
    VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &u.set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &range;
    if (VkResult r = fn_.vkCreatePipelineLayout(device_, &layout_info, nullptr, &u.layout); r != VK_SUCCESS)
      fail("vkCreatePipelineLayout", r);
  }
  VkShaderModule module = VK_NULL_HANDLE;
  if (result) {
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code->code.size_bytes();
    info.pCode = code->code.data();
    if (VkResult r = fn_.vkCreateShaderModule(device_, &info, nullptr, &module); r != VK_SUCCESS)
      fail("vkCreateShaderModule", r);
  }
  if (result) {
    const std::string name(code->entry);
    VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = name.c_str();
    info.layout = u.layout;
    if (VkResult r = fn_.vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &info, nullptr, &u.pipeline);
        r != VK_SUCCESS)
      fail("vkCreateComputePipelines", r);
  }
  if (module) fn_.vkDestroyShaderModule(device_, module, nullptr);
  if (result) result = check("dispatch");  // the validation layer's word on the shader
  if (!result) {
    if (u.pipeline) fn_.vkDestroyPipeline(device_, u.pipeline, nullptr);
    if (u.layout) fn_.vkDestroyPipelineLayout(device_, u.layout, nullptr);
    if (u.set_layout) fn_.vkDestroyDescriptorSetLayout(device_, u.set_layout, nullptr);
    return std::move(result).error();
  }
  return &user_pipelines_.emplace(&entry, u).first->second;
}

}  // namespace roster::vulkan
