#pragma once
// The binding policy's types, apart from decide.hpp so that the placement
// (detail/decision/placement.hpp, which decide's body includes) can name them.

#include <roster/config.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace roster {

/// How local ranks are placed on devices, named as Slurm's --gpu-bind names them.
enum class gpu_bind : std::uint8_t {
  closest,  ///< a device local to the CPUs the launcher gave the rank; round-robin when it gave them all
  map,      ///< an explicit list of pool indices, one per local rank (map_gpu:0,1,1,0), repeated past its end
  single,   ///< n ranks per device: local rank r on device r / n (single:N)
  none,     ///< no binding: every rank decides as a lone process would
};

/// A binding policy and where it came from.
struct bind_policy {
  gpu_bind kind = gpu_bind::closest;
  std::vector<std::size_t> map;      ///< for map: pool indices
  std::size_t ranks_per_device = 1;  ///< for single
  std::string source = "the default";  ///< e.g. "ROSTER_GPU_BIND='single:2'", "the caller's"
  /// Returns the policy as ROSTER_GPU_BIND writes it, e.g. "map_gpu:0,1".
  [[nodiscard]] ROSTER_API ROSTER_INLINE std::string str() const;
};

}  // namespace roster
