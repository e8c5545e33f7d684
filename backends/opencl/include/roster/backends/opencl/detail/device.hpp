#pragma once
// Private: the OpenCL device, an opened adapter. Its definitions are split by
// job: device.cpp (context, queue, buffers, transfers, synchronisation),
// kernels.cpp (the programs it builds: generated passes, the dot's final sum,
// users' kernels and their checks), dispatch.cpp (passes, calls, timing),
// native.cpp (the handles behind it).

#include <roster/backends/opencl/detail/adapters.hpp>
#include <roster/backends/opencl/detail/source.hpp>

#include <roster/kernels.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace roster::opencl {
namespace detail {

inline constexpr std::size_t group_size = 256;      // work-group size of the built-in kernels
inline constexpr std::size_t max_dot_groups = 2048;  // partial sums of one dot, at most
inline constexpr std::size_t max_pass_steps = 16;    // steps fused into one kernel, at most
inline constexpr std::size_t max_pass_buffers = 24;  // distinct buffers of one pass, at most

struct cl_buffer {
  cl_mem mem = nullptr;
  element_type type = element_type::f32;
  std::size_t size = 0;  // elements
};

// A program and the one kernel the backend runs from it.
struct built_kernel {
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
};

// A user's kernel (roster/backends/opencl.hpp), built at its first call.
struct user_kernel {
  built_kernel built;
  std::size_t local = 0;  // work-group size
};

// The process-wide counts behind detail/testing.hpp.
struct activity_counters {
  std::atomic<std::uint64_t> kernels_enqueued{0};
  std::atomic<std::uint64_t> programs_built{0};
};
activity_counters& counters() noexcept;

// The events of a timed dispatch: the first enqueued kernel's and the last's.
struct timing {
  bool on = false;
  cl_event first = nullptr;
  cl_event last = nullptr;
};

}  // namespace detail

/// One opened OpenCL device: a context holding it alone, one in-order queue
/// with profiling, buffers as cl_mem objects, and the kernels it has built.
class device final : public roster::device {
 public:
  explicit device(detail::physical p) : p_(std::move(p)) {}
  ~device() override { destroy(); }

  [[nodiscard]] const adapter_info& adapter() const noexcept override { return p_.info; }
  [[nodiscard]] device_caps caps() const noexcept override { return device_caps{false, p_.info.f64, op_set::all()}; }

  expected<void> init();
  expected<void> synchronize() override;
  expected<void> dispatch_steps(std::span<const step> steps) override;
  expected<duration_ns> timed_dispatch_steps(std::span<const step> steps) override;

 protected:
  expected<std::uint32_t> do_allocate(element_type t, std::size_t n) override;
  expected<void> do_release(std::uint32_t slot) override;
  bool owns(const buffer& b) const noexcept override {
    std::lock_guard lock(mutex_);
    auto it = buffers_.find(b.slot);
    return it != buffers_.end() && it->second.type == b.type && it->second.size == b.size;
  }
  expected<void> do_upload(const buffer& b, const void* src) override;
  expected<void> do_download(const buffer& b, void* dst) override;
  expected<bool> do_native(std::uint64_t kind, void* out) override;
  expected<bool> do_native_buffer(const buffer& b, std::uint64_t kind, void* out) override;

 private:
  std::string where(std::string_view call) const { return p_.info.spec() + ": " + std::string(call); }
  void destroy() noexcept;

  // kernels.cpp
  expected<detail::built_kernel> build(const std::string& source, const char* name, const std::string& options,
                                       std::string_view what);
  expected<cl_kernel> pass_kernel(const detail::pass_layout& layout);
  expected<cl_kernel> dot_final_kernel(element_type t);
  expected<const detail::user_kernel*> user_kernel_for(const kernel_entry& entry);
  expected<void> check_parameters(const kernel_entry& entry, cl_kernel k, std::string_view what);

  // dispatch.cpp
  expected<void> run(std::span<const step> steps, detail::timing& t);
  expected<void> run_pass(std::span<const step* const> steps, detail::timing& t);
  expected<void> run_call(const kernel_call& c, detail::timing& t);
  expected<void> enqueue(cl_kernel k, std::size_t global, std::size_t local, detail::timing& t,
                         std::string_view what);

  detail::physical p_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_mem partials_ = nullptr;  // max_dot_groups doubles, the dot's partial sums
  std::size_t local_ = detail::group_size;
  std::size_t dot_groups_ = 1;  // work-groups of a dot pass, at most
  unsigned vector_bytes_ = 16;  // bytes one work-item moves per step (ROSTER_OPENCL_VECTOR=0: one element)
  bool wide_index_ = false;     // 64-bit indices in every kernel (ROSTER_OPENCL_WIDE_INDEX=1)
  std::unordered_map<std::uint32_t, detail::cl_buffer> buffers_;
  std::unordered_map<std::string, detail::built_kernel> passes_;  // by pass_layout::key()
  detail::built_kernel dot_final_[2];                              // f32, f64
  std::unordered_map<const kernel_entry*, detail::user_kernel> user_kernels_;
  std::uint32_t next_slot_ = 1;
  mutable std::mutex mutex_;
};

}  // namespace roster::opencl
