#pragma once
/// The OpenCL backend: STREAM programs as OpenCL C kernels, generated for each
/// program shape and built at run time on any OpenCL 1.2 or newer device
/// (GPUs of any vendor, PoCL on the CPU), and users' own OpenCL C kernels.
///
/// Library mode: link roster_opencl whole (Meson's roster_opencl_dep,
/// pkg-config's roster-opencl and CMake's roster::opencl do): nothing
/// references its registration, so a plain link of the archive would drop it;
/// this header then needs no OpenCL header (<roster/backends/opencl/native.hpp>
/// does). In a ROSTER_SOURCE file or under ROSTER_HEADER_ONLY it compiles the
/// backend and registers it; it then needs <CL/cl.h> and no OpenCL library
/// (the ICD loader, libOpenCL.so.1, is opened at run time).

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/kernels.hpp>

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace roster::opencl {

/// An OpenCL entry point, the payload of an OpenCL kernel entry: OpenCL C
/// source and the name of one `kernel` function in it. Its parameters are the
/// signature's in order (a buffer as `global T*`, a scalar as float, double,
/// int or uint), then the extent as `ulong`. The device runs a global size of
/// the extent rounded up to a multiple of local_size, so the kernel checks
/// get_global_id(0) against the extent. Built once per device, at the first
/// call, with `options` added to the build options.
struct source {
  static constexpr std::uint64_t payload_id = payload_id_of("roster::opencl::source/1");
  std::string_view code;            ///< OpenCL C source
  std::string_view name;            ///< the kernel function to run
  std::uint32_t local_size = 256;   ///< work-group size along x
  std::string_view options = {};    ///< build options, e.g. "-cl-fast-relaxed-math"
};

/// Returns an OpenCL kernel entry with signature P... running `code`, a
/// constinit source, for ROSTER_KERNEL: `constinit const roster::opencl::source
/// axpy_cl{text, "axpy"}; constinit const roster::kernel_entry e =
/// roster::opencl::kernel<...>("axpy", "plain", roster::default_variant, &axpy_cl);`
template <class... P>
constexpr kernel_entry kernel(std::string_view op, std::string_view variant, bool is_default,
                              const source* code) noexcept {
  return kernel_entry_of<P...>(op, "opencl", variant, is_default, payload_of(code));
}

/// An opened OpenCL device. Its definition holds OpenCL handles and stays
/// private to the backend; use it through roster::device.
class device;

/// The backend registered as "opencl", rank 30: after CUDA (10) and Vulkan
/// (20), which reach the same GPUs through the vendor's primary compute path
/// with code compiled ahead of time, and before the CPU backend (100), so a GPU
/// that only OpenCL reaches (AMD, Intel, ARM) is preferred to the host CPU. No
/// native grid sync: acquire() wraps its devices in the grid-sync split.
struct backend {
  static constexpr std::string_view id = "opencl";
  static constexpr int rank = 30;
  static constexpr bool dispatches = true;
  static constexpr op_set ops = op_set::all();
  using device_type = opencl::device;
  /// Its users' kernels are OpenCL C sources (roster::opencl::kernel).
  using kernel_payload = source;
  /// Opens OpenCL adapter `ordinal` (the order enumerate() lists).
  static ROSTER_INLINE expected<std::unique_ptr<device_type>> open(open_key, std::uint32_t ordinal);
  /// Lists every device of every OpenCL platform; empty when there is no ICD
  /// loader or no platform.
  static ROSTER_INLINE expected<std::vector<adapter_info>> enumerate();
};

}  // namespace roster::opencl

// The out-of-line code, by job: in a ROSTER_SOURCE file and under
// ROSTER_HEADER_ONLY here, in library mode compiled once by src/<job>.cpp.
#if defined(ROSTER_IMPL_WITH_INL)
#  if !__has_include(<CL/cl.h>)
#    error "<roster/backends/opencl.hpp> compiles the OpenCL backend in this file (ROSTER_SOURCE or ROSTER_HEADER_ONLY) and needs the OpenCL headers: <CL/cl.h> is not on the include path. Fix: install them (Debian/Ubuntu: opencl-c-headers; Fedora: opencl-headers) or add their folder with -I; no OpenCL library is linked"
#  else
#    include <roster/backends/opencl/detail/loader-inl.hpp>
#    include <roster/backends/opencl/detail/adapters-inl.hpp>
#    include <roster/backends/opencl/detail/device-inl.hpp>
#    include <roster/backends/opencl/detail/source-inl.hpp>
#    include <roster/backends/opencl/detail/kernels-inl.hpp>
#    include <roster/backends/opencl/detail/dispatch-inl.hpp>
#    include <roster/backends/opencl/detail/native-inl.hpp>
#    include <roster/backends/opencl/detail/registration-inl.hpp>
#  endif
#else
// Library mode: the link needs the bodies, from a ROSTER_SOURCE file or the library.
ROSTER_IMPL_NEED_BODIES(opencl);
#endif
