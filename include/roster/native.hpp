#pragma once
/// Native handles: the backend API's own objects behind a device or a buffer
/// (a CUDA stream and device pointer, a VkDevice, queue and VkBuffer, the CPU
/// pool and host pointer), so a user's own kernels run between roster's
/// programs. Each backend defines its handle type in its own header
/// (roster::cpu::native, roster::cuda::native, roster::vulkan::native); the
/// ordering contract is in docs/native.md.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/program.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace roster {

/// Returns the stable id of a native-handle type from its name and layout
/// version, e.g. native_id_of("roster::cuda::native/1") (FNV-1a, 64 bits).
/// Bump the version when the type's layout changes: a backend built against
/// the old layout then refuses the new one instead of writing past it.
constexpr std::uint64_t native_id_of(std::string_view name) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

/// The contract of a backend's native-handle type N:
///   static constexpr std::uint64_t native_id;   // native_id_of("name/version")
///   static constexpr std::string_view backend;  // the backend's id, e.g. "cuda"
///   struct buffer;                               // the handles of one buffer
/// Both N and N::buffer are default-constructible; the device fills them in.
template <class N>
concept native_handles = requires {
  { N::native_id } -> std::convertible_to<std::uint64_t>;
  { N::backend } -> std::convertible_to<std::string_view>;
  typename N::buffer;
} && std::is_default_constructible_v<N> && std::is_default_constructible_v<typename N::buffer>;

namespace detail {
// The way from the public templates to a device's protected do_native calls;
// the checks and messages live out of line (native-inl.hpp).
struct native_access {
  [[nodiscard]] ROSTER_API ROSTER_INLINE static expected<void> handles(device& d, std::uint64_t kind,
                                                                       std::string_view backend,
                                                                       std::string_view type, void* out);
  [[nodiscard]] ROSTER_API ROSTER_INLINE static expected<void> buffer_handles(device& d, const buffer& b,
                                                                              std::uint64_t kind,
                                                                              std::string_view backend,
                                                                              std::string_view type, void* out);
  // A wrapper's way to the device inside (detail::plugin_device).
  static expected<std::uint32_t> allocate(device& d, element_type t, std::size_t n) { return d.do_allocate(t, n); }
  static expected<void> release(device& d, std::uint32_t slot) { return d.do_release(slot); }
  static bool owns(const device& d, const buffer& b) noexcept { return d.owns(b); }
  static expected<void> upload(device& d, const buffer& b, const void* src) { return d.do_upload(b, src); }
  static expected<void> download(device& d, const buffer& b, void* dst) { return d.do_download(b, dst); }
  static expected<bool> native(device& d, std::uint64_t kind, void* out) { return d.do_native(kind, out); }
  static expected<bool> native_buffer(device& d, const buffer& b, std::uint64_t kind, void* out) {
    return d.do_native_buffer(b, kind, out);
  }
  static void split_wrapped(device& d) noexcept { d.on_split_wrapped(); }
};
}  // namespace detail

/// Returns the native handles of a device, as N (e.g. roster::cuda::native).
/// A device of another backend is an errc::invalid_argument error naming both
/// backends. Wrappers (the grid-sync split) pass the call to the device inside.
template <native_handles N>
[[nodiscard]] expected<N> native(device& d) {
  N out{};
  if (auto ok = detail::native_access::handles(d, N::native_id, N::backend, detail::type_name<N>(), &out); !ok)
    return std::move(ok).error();
  return out;
}

/// Returns the native handles of a live buffer of a device, as N::buffer
/// (e.g. roster::cuda::native::buffer). A device of another backend, a buffer
/// of another device or a released buffer is an errc::invalid_argument error.
template <native_handles N>
[[nodiscard]] expected<typename N::buffer> native_buffer(device& d, const buffer& b) {
  typename N::buffer out{};
  if (auto ok = detail::native_access::buffer_handles(d, b, N::native_id, N::backend, detail::type_name<N>(), &out);
      !ok)
    return std::move(ok).error();
  return out;
}

/// How a device's built-in kernels were made ready to run, once per device:
/// CUDA's module load from its fat image (with the driver's compile of the
/// PTX where the image has no SASS for the GPU), Vulkan's pipelines from the
/// committed SPIR-V. roster::kernels_loaded(dev) returns it.
struct code_load {
  static constexpr std::uint64_t native_id = native_id_of("roster::code_load/1");
  std::int64_t ns = 0;  ///< wall time of the one-time load
  std::string how;      ///< what was loaded and how, e.g. "cuModuleLoadData: SASS sm_90 from the image, no JIT"
};

/// Returns how the device's built-in kernels were loaded, loading them now
/// where the backend loads them at the first dispatch (CUDA does, so a
/// process that only asks pays nothing); nothing for a backend that does not
/// say (the CPU runs code compiled into the program). An error is the load's
/// own (a driver that cannot run the image), as the first dispatch would give.
[[nodiscard]] ROSTER_API ROSTER_INLINE expected<std::optional<code_load>> kernels_loaded(device& d);

}  // namespace roster

#if defined(ROSTER_IMPL_WITH_INL)
#  include <roster/detail/backend/native-inl.hpp>
#endif
