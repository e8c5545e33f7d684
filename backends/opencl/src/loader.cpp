// The compiled OpenCL backend: the ICD loader (dlopen), its function table and the errors of failed calls.
// detail/loader-inl.hpp compiled once; in header-only mode (and in a
// ROSTER_SOURCE file) <roster/backends/opencl.hpp> includes it instead.
#include <roster/backends/opencl.hpp>
#if !defined(ROSTER_IMPL_WITH_INL)
#  include <roster/backends/opencl/detail/loader-inl.hpp>
#endif
