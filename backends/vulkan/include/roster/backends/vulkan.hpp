#pragma once
/// The Vulkan backend: STREAM programs as SPIR-V compute on any Vulkan 1.1
/// device (discrete GPUs, Mesa's lavapipe on the CPU).
///
/// Library mode: link roster_vulkan whole (Meson's roster_vulkan_dep,
/// pkg-config's roster-vulkan and CMake's roster::vulkan do): nothing
/// references its registration, so a plain link of the archive would drop it.
/// In a ROSTER_SOURCE file or under ROSTER_HEADER_ONLY this header compiles
/// the backend and registers it; it then needs <vulkan/vulkan.h> and no Vulkan
/// library (the loader, libvulkan.so.1, is opened at run time).

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/kernels.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace roster::vulkan {

/// A Vulkan entry point, the payload of a Vulkan kernel entry: a compute
/// shader's SPIR-V. Buffers are storage buffers at set 0, bindings 0..n-1 in
/// signature order. The push constants are `uint extent` at offset 0, then
/// each scalar in signature order at its natural alignment (4 bytes, 8 for a
/// double). The dispatch runs ceil(extent / local_size_x) workgroups along x.
struct shader {
  static constexpr std::uint64_t payload_id = payload_id_of("roster::vulkan::shader/1");
  std::span<const std::uint32_t> code;
  std::uint32_t local_size_x = 64;  ///< the shader's local_size_x
  std::string_view entry = "main";
};

/// Returns a Vulkan kernel entry with signature P... running `code`, a
/// constinit shader, for ROSTER_KERNEL: `constinit const roster::vulkan::shader
/// axpy_spv{words, 64}; constinit const roster::kernel_entry e =
/// roster::vulkan::kernel<...>("axpy", "plain", roster::default_variant, &axpy_spv);`
template <class... P>
constexpr kernel_entry kernel(std::string_view op, std::string_view variant, bool is_default,
                              const shader* code) noexcept {
  return kernel_entry_of<P...>(op, "vulkan", variant, is_default, payload_of(code));
}

/// An opened Vulkan adapter. Its definition holds Vulkan handles and stays
/// private to the backend; use it through roster::device.
class device;

/// The backend registered as "vulkan" (rank 20; no native grid sync, so
/// acquire() wraps its devices in the grid-sync split).
struct backend {
  static constexpr std::string_view id = "vulkan";
  static constexpr int rank = 20;
  static constexpr bool dispatches = true;
  static constexpr op_set ops = op_set::all();
  using device_type = vulkan::device;
  /// Its users' kernels are SPIR-V shaders (roster::vulkan::kernel).
  using kernel_payload = shader;
  /// Opens Vulkan adapter `ordinal` (the order enumerate() lists).
  static ROSTER_INLINE expected<std::unique_ptr<device_type>> open(open_key, std::uint32_t ordinal);
  /// Lists the Vulkan 1.1 adapters with a compute queue; empty when there is
  /// no Vulkan loader or driver.
  ROSTER_API static ROSTER_INLINE expected<std::vector<adapter_info>> enumerate();
};

/// What the Khronos validation layer reported (ROSTER_VULKAN_VALIDATION=1).
struct validation_report {
  bool enabled = false;                ///< the layer is on in this process
  std::uint64_t errors = 0;            ///< validation errors and warnings so far
  std::vector<std::string> messages;   ///< the first ones, for test output
};

/// Returns the validation layer's messages so far (tests assert none).
ROSTER_API ROSTER_INLINE validation_report validation();

}  // namespace roster::vulkan

// The out-of-line code, by job: in a ROSTER_SOURCE file and under
// ROSTER_HEADER_ONLY here, in library mode compiled once by src/<job>.cpp.
#if defined(ROSTER_IMPL_WITH_INL)
#  if !__has_include(<vulkan/vulkan.h>)
#    error "<roster/backends/vulkan.hpp> compiles the Vulkan backend in this file (ROSTER_SOURCE or ROSTER_HEADER_ONLY) and needs the Vulkan headers: <vulkan/vulkan.h> is not on the include path. Fix: install them (Debian/Ubuntu: libvulkan-dev; Fedora: vulkan-headers) or add their folder with -I; no Vulkan library is linked"
#  else
// Vulkan structs are built as {sType} with the rest zeroed, on purpose.
#    pragma GCC diagnostic push
#    pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#    include <roster/backends/vulkan/detail/instance-inl.hpp>
#    include <roster/backends/vulkan/detail/mesa_cache-inl.hpp>
#    include <roster/backends/vulkan/detail/adapters-inl.hpp>
#    include <roster/backends/vulkan/detail/device-inl.hpp>
#    include <roster/backends/vulkan/detail/pipelines-inl.hpp>
#    include <roster/backends/vulkan/detail/dispatch-inl.hpp>
#    include <roster/backends/vulkan/detail/native-inl.hpp>
#    include <roster/backends/vulkan/detail/registration-inl.hpp>
#    pragma GCC diagnostic pop
#  endif
#else
// Library mode: the link needs the bodies, from a ROSTER_SOURCE file or the library.
ROSTER_IMPL_NEED_BODIES(vulkan);
#endif
