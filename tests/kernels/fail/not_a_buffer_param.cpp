// Fails: a signature parameter of a type other than float or double.
#include <roster/kernels.hpp>

constexpr roster::kernel_ref<roster::read<int>> bad{"bad"};
static_assert(roster::read<int>::param.is_buffer);
