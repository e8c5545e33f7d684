#pragma once
// Private: the OpenCL adapters, every device of every platform the ICD loader
// finds, with the identity circuits merge by and the limits a device needs.

#include <roster/backends/opencl/detail/loader.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace roster::opencl::detail {

/// One OpenCL 1.2 or newer device, and its identity.
struct physical {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  adapter_info info;
  unsigned platform_version = 0;       ///< major * 10 + minor, e.g. 30
  std::uint64_t max_alloc = 0;         ///< CL_DEVICE_MAX_MEM_ALLOC_SIZE, bytes
  std::size_t max_work_group = 0;      ///< CL_DEVICE_MAX_WORK_GROUP_SIZE
  std::string platform_name;
};

/// Lists the usable devices: every platform's in the loader's order, each
/// platform's in its own (the ordinals of adapter specs). Empty when the
/// loader finds no platform; the loader's own failure is an error.
expected<std::vector<physical>> physical_devices();

/// Returns a string property of a device (trailing NULs and spaces dropped).
std::string device_text(cl_device_id d, cl_device_info what);

}  // namespace roster::opencl::detail
