#pragma once
// The programs an OpenCL device builds: a kernel for each pass layout it has
// run (source.cpp writes them), the dot's final sum, and users' kernels from
// the kernel inventory, whose parameter lists are checked against their
// registered signatures before their first call.

#include <roster/backends/opencl.hpp>

#include <roster/backends/opencl/detail/device.hpp>

#include <roster/backends/opencl/detail/testing.hpp>

#include <algorithm>
#include <string>

namespace roster::opencl {

using namespace detail;

namespace detail {

// Returns a build log, cut to its first lines (a failing build can log pages).
ROSTER_INLINE std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (fn().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS) return {};
  std::string log(size, '\0');
  if (fn().clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS)
    return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
  if (log.size() > 2000) log = log.substr(0, 2000) + "\n[... the build log goes on]";
  return log;
}

ROSTER_INLINE std::string kernel_arg_text(cl_kernel k, cl_uint index, cl_kernel_arg_info what) {
  std::size_t size = 0;
  if (fn().clGetKernelArgInfo(k, index, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string s(size, '\0');
  if (fn().clGetKernelArgInfo(k, index, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

// The OpenCL C type a parameter of the signature takes ("double*", "uint").
ROSTER_INLINE std::string expected_type(const kernel_param& p) {
  if (p.is_buffer) return p.type == element_type::f64 ? "double*" : "float*";
  switch (p.scalar) {
    case scalar_type::f32: return "float";
    case scalar_type::f64: return "double";
    case scalar_type::i32: return "int";
    case scalar_type::u32: return "uint";
  }
  return "?";
}

// A reported type name as the checks compare it: qualifiers some
// implementations leave in dropped ("const double*" -> "double*"), and the
// long spellings of uint and ulong shortened.
ROSTER_INLINE std::string normalized_type(const std::string& reported) {
  std::string words, t;
  for (char c : reported) words += c == '*' ? std::string(" * ") : std::string(1, c);
  std::size_t at = 0;
  while (at < words.size()) {
    const std::size_t end = std::min(words.find(' ', at), words.size());
    const std::string w = words.substr(at, end - at);
    at = end + 1;
    if (w.empty() || w == "const" || w == "restrict" || w == "__restrict" || w == "volatile" || w == "global" ||
        w == "__global")
      continue;
    t += (t.empty() || w == "*" ? "" : " ") + w;
  }
  if (t == "unsigned int") return "uint";
  if (t == "unsigned long") return "ulong";
  return t;
}

ROSTER_INLINE std::string describe(const kernel_param& p) {
  if (p.is_buffer) return std::string(to_string(p.mode)) + " " + std::string(to_string(p.type)) + " buffer";
  return std::string(to_string(p.scalar)) + " scalar";
}

}  // namespace detail

ROSTER_INLINE expected<built_kernel> device::build(const std::string& source, const char* name, const std::string& options,
                                     std::string_view what) {
  built_kernel b;
  cl_int status = CL_SUCCESS;
  const char* text = source.c_str();
  const std::size_t length = source.size();
  b.program = fn().clCreateProgramWithSource(context_, 1, &text, &length, &status);
  if (status != CL_SUCCESS) return cl_failure(where(what), "clCreateProgramWithSource", status);
  status = fn().clBuildProgram(b.program, 1, &p_.device, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    const std::string log = build_log(b.program, p_.device);
    (void)fn().clReleaseProgram(b.program);
    auto e = cl_failure(where(what), "clBuildProgram", status);
    if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS)
      return make_error(errc::invalid_argument,
                        std::string(e.what()) + "; the compiler said:\n" + (log.empty() ? "(no build log)" : log),
                        "correct the OpenCL C source or the build options \"" + options +
                            "\" (the log above names the line)");
    return e;
  }
  counters().programs_built.fetch_add(1, std::memory_order_relaxed);
  b.kernel = fn().clCreateKernel(b.program, name, &status);
  if (status != CL_SUCCESS) {
    (void)fn().clReleaseProgram(b.program);
    if (status == CL_INVALID_KERNEL_NAME)
      return make_error(errc::invalid_argument,
                        where(what) + ": the source has no kernel function named '" + name + "'",
                        "name a `kernel void` function of the source in roster::opencl::source::name");
    return cl_failure(where(what), "clCreateKernel", status);
  }
  return b;
}

ROSTER_INLINE expected<cl_kernel> device::pass_kernel(const pass_layout& layout) {
  std::string key = layout.key();
  if (auto it = passes_.find(key); it != passes_.end()) return it->second.kernel;
  // The generated source is roster's own: a failure to build it is roster's bug.
  auto b = build(pass_source(layout, local_), pass_kernel_name, "", "dispatch");
  if (!b) return std::move(b).error().prepend("the built-in kernel for the pass " + key);
  return passes_.emplace(std::move(key), *b).first->second.kernel;
}

ROSTER_INLINE expected<cl_kernel> device::dot_final_kernel(element_type t) {
  built_kernel& b = dot_final_[t == element_type::f64 ? 1 : 0];
  if (b.kernel != nullptr) return b.kernel;
  auto made = build(dot_final_source(t, local_), dot_final_name, "", "dispatch");
  if (!made) return std::move(made).error().prepend("the built-in kernel for a dot's final sum");
  b = *made;
  return b.kernel;
}

ROSTER_INLINE expected<const user_kernel*> device::user_kernel_for(const kernel_entry& entry) {
  if (auto it = user_kernels_.find(&entry); it != user_kernels_.end()) return &it->second;
  const std::string what = "dispatch: kernel '" + std::string(entry.op) + "' variant '" + std::string(entry.variant) +
                           "'";
  const source* code = entry.payload_as<source>();
  if (code == nullptr || code->code.empty() || code->name.empty() || code->local_size == 0)
    return make_error(errc::invalid_argument, where(what) + " has no OpenCL C source, kernel name or local size",
                      "register it with roster::opencl::kernel, giving a roster::opencl::source with its code, "
                      "its kernel function's name and a local size above 0");
  if (code->local_size > p_.max_work_group)
    return make_error(errc::unsupported,
                      where(what) + ": a local size of " + std::to_string(code->local_size) +
                          " is beyond the device's largest work-group (" + std::to_string(p_.max_work_group) + ")",
                      "register the kernel with a smaller local_size (roster-info lists the device)");
  // Argument names and types, so the parameters can be checked below.
  const std::string options = "-cl-kernel-arg-info " + std::string(code->options);
  auto b = build(std::string(code->code), std::string(code->name).c_str(), options, what);
  if (!b) return std::move(b).error();
  if (auto ok = check_parameters(entry, b->kernel, what); !ok) {
    (void)fn().clReleaseKernel(b->kernel);
    (void)fn().clReleaseProgram(b->program);
    return std::move(ok).error();
  }
  return &user_kernels_.emplace(&entry, user_kernel{*b, code->local_size}).first->second;
}

// The kernel function's parameters against the entry's signature: one per
// signature parameter in order, then the extent (ulong); buffers in global
// memory of the element type, scalars of the signature's type. Where the
// implementation keeps no argument info, only the count is checked.
ROSTER_INLINE expected<void> device::check_parameters(const kernel_entry& entry, cl_kernel k, std::string_view what) {
  cl_uint count = 0;
  ROSTER_IMPL_CL_CALL(where(what), clGetKernelInfo, k, CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr);
  std::string wanted;
  for (const auto& p : entry.signature) wanted += expected_type(p) + ", ";
  wanted += "ulong";
  const std::string fix = "declare the kernel function's parameters as the signature's, in order, then the extent: (" +
                          wanted + "); a buffer is `global T*`";
  if (count != entry.signature.size() + 1)
    return make_error(errc::invalid_argument,
                      where(what) + ": the kernel function takes " + std::to_string(count) +
                          " parameters; its signature and the extent make " +
                          std::to_string(entry.signature.size() + 1),
                      fix);
  for (cl_uint i = 0; i <= entry.signature.size(); ++i) {
    const bool extent = i == entry.signature.size();
    cl_kernel_arg_address_qualifier space = 0;
    const cl_int status =
        fn().clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof space, &space, nullptr);
    if (status == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) return {};
    if (status != CL_SUCCESS) return cl_failure(where(what), "clGetKernelArgInfo", status);
    const std::string type = normalized_type(kernel_arg_text(k, i, CL_KERNEL_ARG_TYPE_NAME));
    const std::string want = extent ? "ulong" : expected_type(entry.signature[i]);
    const bool buffer = !extent && entry.signature[i].is_buffer;
    const bool space_ok = buffer ? space == CL_KERNEL_ARG_ADDRESS_GLOBAL : space == CL_KERNEL_ARG_ADDRESS_PRIVATE;
    if (type != want || !space_ok) {
      const std::string name = kernel_arg_text(k, i, CL_KERNEL_ARG_NAME);
      return make_error(errc::invalid_argument,
                        where(what) + ": parameter " + std::to_string(i) + " ('" + name + "') is " +
                            (space == CL_KERNEL_ARG_ADDRESS_GLOBAL ? "global " : "") + type + ", but " +
                            (extent ? std::string("the extent")
                                    : "the signature's parameter " + std::to_string(i) + " (" +
                                          describe(entry.signature[i]) + ")") +
                            " needs " + (buffer ? "global " : "") + want,
                        fix);
    }
  }
  return {};
}

namespace detail {

ROSTER_INLINE activity_counters& counters() noexcept {
  static activity_counters c;
  return c;
}

ROSTER_INLINE std::string kernel_type_name(const std::string& reported) { return normalized_type(reported); }

ROSTER_INLINE activity activity_so_far() noexcept {
  return {counters().kernels_enqueued.load(std::memory_order_relaxed),
          counters().programs_built.load(std::memory_order_relaxed)};
}

}  // namespace detail
}  // namespace roster::opencl
