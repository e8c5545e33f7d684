#pragma once
// Private: the CUDA backend's entry points, open and enumerate, and its
// registration: backend, precedence, capability and one built-in kernel
// entry per op and element type (with no launcher of its own: a call of one
// runs in the program's one launch, as device::dispatch maps it onto the
// built-in step).

#include <roster/backends/cuda.hpp>
#include <roster/backends/cuda/detail/adapters.hpp>
#include <roster/backends/cuda/detail/driver.hpp>

#include <memory>
#include <vector>

namespace roster::cuda {

ROSTER_INLINE expected<std::unique_ptr<device>> backend::open(open_key, std::uint32_t ordinal) {
  return device::open(ordinal);
}

ROSTER_INLINE expected<std::vector<adapter_info>> backend::enumerate() {
  auto count = detail::device_count();
  if (!count) {
    // No GPU, no driver, an old driver or none visible: nothing to list (open says why).
    if (count.error().code() == errc::unavailable) return std::vector<adapter_info>{};
    return std::move(count).error();
  }
  std::vector<adapter_info> out;
  out.reserve(static_cast<std::size_t>(*count));
  for (int i = 0; i < *count; ++i) {
    auto a = detail::describe_adapter(i);
    if (!a) return std::move(a).error();
    out.push_back(std::move(*a));
  }
  return out;
}

}  // namespace roster::cuda

ROSTER_REGISTER_BACKEND(roster::cuda::backend);

// This file compiles the backend: say so to the linker (<roster/backend.hpp>).
ROSTER_IMPL_DEFINE_BODIES(cuda);
