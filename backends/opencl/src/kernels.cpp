// The compiled OpenCL backend: the programs a device builds, users' kernels and their parameter checks.
// detail/kernels-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/opencl.hpp> includes it instead.
#include <roster/backends/opencl.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/opencl/detail/kernels-inl.hpp>
#endif
