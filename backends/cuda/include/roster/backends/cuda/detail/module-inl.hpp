#pragma once
// Private: the built-in kernels' image and launches (module.hpp).

#include <roster/backends/cuda/detail/module.hpp>
// The image: the committed one, or the library build's own where the Meson
// option nvcc_arch asks for other architectures (its path in ROSTER_IMPL_CUDA_FATBIN).
#if defined(ROSTER_IMPL_CUDA_FATBIN)
#  include ROSTER_IMPL_CUDA_FATBIN
#else
#  include <roster/backends/cuda/detail/fatbin/kernels_fatbin.hpp>
#endif

#include <string>
#include <vector>

namespace roster::cuda::detail {

ROSTER_INLINE int kernels_cuda_version() noexcept { return fatbin::cuda_version; }
ROSTER_INLINE const char* kernels_architectures() noexcept { return fatbin::architectures; }

ROSTER_INLINE std::string describe_load(cu_function f, int cc) {
  const driver_api& cu = api();
  auto arch = [](int v) { return std::to_string(v / 10) + std::to_string(v % 10); };
  std::string how = "cuModuleLoadData of the image (" + std::string(kernels_architectures()) + ")";
  int ptx = 0, binary = 0;
  if (cu.cuFuncGetAttribute == nullptr || cu.cuFuncGetAttribute(&ptx, cu_func_ptx_version, f) != cu_success ||
      cu.cuFuncGetAttribute(&binary, cu_func_binary_version, f) != cu_success)
    return how + " for sm_" + arch(cc) + "; the driver does not say which code runs";
  // The image's SASS for an architecture is built from that architecture's
  // PTX: a function whose PTX version is below its binary's came from the
  // image's oldest PTX, which the driver compiled when it loaded the module.
  const std::string sass = " sm_" + arch(binary) + " ";
  const bool in_image = (" " + std::string(kernels_architectures()) + " ").find(sass) != std::string::npos;
  if (ptx >= binary && in_image) return how + ": SASS sm_" + arch(binary) + " from the image, no JIT";
  return how + ": the driver compiled PTX compute_" + arch(ptx) + " to sm_" + arch(binary) +
         " (JIT; its cache keeps the result unless CUDA_CACHE_DISABLE=1)";
}

namespace kernel_loading {

// The image, decoded once from its base64 text (a string literal compiles
// in a fraction of the time an array of as many numbers takes).
inline const std::vector<unsigned char>& image() {
  static const std::vector<unsigned char> bytes = [] {
    std::vector<unsigned char> out;
    out.reserve(sizeof fatbin::image_base64 / 4 * 3);
    unsigned acc = 0;
    int bits = 0;
    for (const char c : fatbin::image_base64) {
      int v;
      if (c >= 'A' && c <= 'Z') v = c - 'A';
      else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
      else if (c >= '0' && c <= '9') v = c - '0' + 52;
      else if (c == '+') v = 62;
      else if (c == '/') v = 63;
      else continue;  // '=' padding and the terminating null
      acc = (acc << 6) | static_cast<unsigned>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out.push_back(static_cast<unsigned char>((acc >> bits) & 0xffu));
      }
    }
    return out;
  }();
  return bytes;
}

inline int lookup(const driver_api& cu, cu_module m, cu_function& f, const std::string& name, std::string& what) {
  const int e = cu.cuModuleGetFunction(&f, m, name.c_str());
  if (e != cu_success) what = "cuModuleGetFunction(" + name + ")";
  return e;
}

}  // namespace kernel_loading

ROSTER_INLINE int load_kernels(kernel_set& k, int variant, std::string& what) {
  const driver_api& cu = api();
  const auto& bytes = kernel_loading::image();
  k.variant = variant;
  if (const int e = cu.cuModuleLoadData(&k.module, bytes.data()); e != cu_success) {
    what = "cuModuleLoadData of roster's kernels";
    k.module = nullptr;
    return e;
  }
  for (int f64 = 0; f64 < 2; ++f64) {
    const std::string t = f64 != 0 ? "f64" : "f32";
    auto get = [&](cu_function& f, const std::string& name) {
      return kernel_loading::lookup(cu, k.module, f, name, what);
    };
    for (int op = 0; op < k_dot; ++op)
      if (int e = get(k.stream[f64][op], "roster_stream_" + t + "_" + op_names[op] + "_s" +
                                             std::to_string(shape_for(op, variant)));
          e != cu_success)
        return e;
    const std::string h = "_h" + std::to_string(hint_of[shape_for(k_dot, variant)]);
    if (int e = get(k.dot_coop[f64], "roster_dot_coop_" + t + h); e != cu_success) return e;
    if (int e = get(k.dot_partial[f64], "roster_dot_partial_" + t + h); e != cu_success) return e;
    if (int e = get(k.dot_final[f64], "roster_dot_final_" + t); e != cu_success) return e;
    if (int e = get(k.program_coop[f64], "roster_program_coop_" + t); e != cu_success) return e;
    if (int e = get(k.program_split[f64], "roster_program_split_" + t); e != cu_success) return e;
  }
  return cu_success;
}

ROSTER_INLINE int launch_stream(const kernel_set& k, const kstep& st, std::uint64_t n, bool f64, int grid,
                                cu_stream s) noexcept {
  if (st.op >= k_dot) return cu_invalid_value;
  stream_args a{st.out, st.in1, st.in2, st.scalar, n};
  void* args[] = {&a};
  const auto block = static_cast<unsigned>(stream_block(st.op, k.variant));
  return api().cuLaunchKernel(k.stream[f64][st.op], static_cast<unsigned>(grid), 1, 1, block, 1, 1, 0, s, args,
                              nullptr);
}

ROSTER_INLINE int launch_dot_coop(const kernel_set& k, const kstep& st, std::uint64_t n, bool f64, double* partials,
                                  int grid, cu_stream s) noexcept {
  stream_args a{st.out, st.in1, st.in2, 0.0, n};
  void* args[] = {&a, &partials};
  return api().cuLaunchCooperativeKernel(k.dot_coop[f64], static_cast<unsigned>(grid), 1, 1, block_threads, 1, 1, 0,
                                         s, args);
}

ROSTER_INLINE int launch_dot_split(const kernel_set& k, const kstep& st, std::uint64_t n, bool f64, double* partials,
                                   int grid, cu_stream s) noexcept {
  stream_args a{st.out, st.in1, st.in2, 0.0, n};
  void* args[] = {&a, &partials};
  const driver_api& cu = api();
  if (int e = cu.cuLaunchKernel(k.dot_partial[f64], static_cast<unsigned>(grid), 1, 1, block_threads, 1, 1, 0, s,
                                args, nullptr);
      e != cu_success)
    return e;
  void* out = st.out;
  void* fargs[] = {&partials, &grid, &out};
  return cu.cuLaunchKernel(k.dot_final[f64], 1, 1, 1, block_threads, 1, 1, 0, s, fargs, nullptr);
}

ROSTER_INLINE int launch_program_coop(const kernel_set& k, const kprogram& p, bool f64, int grid,
                                      cu_stream s) noexcept {
  void* args[] = {const_cast<kprogram*>(&p)};
  return api().cuLaunchCooperativeKernel(k.program_coop[f64], static_cast<unsigned>(grid), 1, 1, block_threads, 1, 1,
                                         0, s, args);
}

ROSTER_INLINE int launch_segment_split(const kernel_set& k, const kprogram& p, int seg, bool f64, int grid,
                                       cu_stream s) noexcept {
  void* args[] = {const_cast<kprogram*>(&p), &seg};
  const driver_api& cu = api();
  if (int e = cu.cuLaunchKernel(k.program_split[f64], static_cast<unsigned>(grid), 1, 1, block_threads, 1, 1, 0, s,
                                args, nullptr);
      e != cu_success)
    return e;
  const ksegment& sg = p.segments[seg];
  if (sg.dot < 0) return cu_success;
  double* partials = p.partials;
  void* out = p.steps[sg.dot].out;
  void* fargs[] = {&partials, &grid, &out};
  return cu.cuLaunchKernel(k.dot_final[f64], 1, 1, 1, block_threads, 1, 1, 0, s, fargs, nullptr);
}

}  // namespace roster::cuda::detail
