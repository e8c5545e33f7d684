#pragma once
// Private: the CPU backend's entry points, open and enumerate, which
// ROSTER_REGISTER_BACKEND in <roster/backends/cpu.hpp> registers.

#include <roster/backends/cpu.hpp>

#include <memory>
#include <string>
#include <vector>

namespace roster::cpu {

ROSTER_INLINE expected<std::unique_ptr<device>> backend::open(open_key, std::uint32_t ordinal) {
  if (ordinal != 0)
    return make_error(errc::not_found, "cpu:" + std::to_string(ordinal) + ": the CPU backend has one adapter, cpu:0",
                      "use the spec 'cpu' or 'cpu:0'");
  auto threads = thread_count();
  if (!threads) return std::move(threads).error();
  return device::open(*threads);
}

ROSTER_INLINE expected<std::vector<adapter_info>> backend::enumerate() {
  auto threads = thread_count();
  if (!threads) return std::move(threads).error();
  std::vector<adapter_info> out;
  out.push_back(host_adapter(*threads));
  return out;
}

}  // namespace roster::cpu

// This file compiles the backend: say so to the linker (<roster/backend.hpp>).
ROSTER_IMPL_DEFINE_BODIES(cpu);
