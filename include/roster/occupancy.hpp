#pragma once
/// How busy a GPU is: memory, compute mode, MIG and the processes on it, read
/// without creating a context (through NVML). Circuits carry it.

#include <roster/config.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roster {

/// How busy a GPU is, read without creating a context (through NVML).
struct device_occupancy {
  /// Who may use the device (nvidia-smi -c).
  enum class compute_mode : std::uint8_t { shared, exclusive_thread, prohibited, exclusive_process };
  std::string source;                  ///< "NVML", or where a test's answers came from
  std::uint64_t memory_total = 0;      ///< bytes
  std::uint64_t memory_free = 0;       ///< bytes
  compute_mode mode = compute_mode::shared;
  bool mig_enabled = false;            ///< MIG mode on: work runs on its instances
  std::vector<std::string> mig_uuids;  ///< the MIG instances' "MIG-..." UUIDs
  std::vector<unsigned> pids;          ///< processes with a context on the device
  friend bool operator==(const device_occupancy&, const device_occupancy&) = default;
};

/// Returns "shared", "exclusive-thread", "prohibited" or "exclusive-process".
constexpr std::string_view to_string(device_occupancy::compute_mode m) noexcept {
  switch (m) {
    case device_occupancy::compute_mode::shared: return "shared";
    case device_occupancy::compute_mode::exclusive_thread: return "exclusive-thread";
    case device_occupancy::compute_mode::prohibited: return "prohibited";
    case device_occupancy::compute_mode::exclusive_process: return "exclusive-process";
  }
  return "unknown";
}

}  // namespace roster
