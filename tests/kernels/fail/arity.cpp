// Fails: a typed call missing its scalar.
#include <roster/kernels.hpp>

constexpr roster::kernel_ref<roster::read_write<double>, roster::read<double>, roster::scalar<double>> axpy{"axpy"};

void build(roster::program& p, const roster::buffer& y, const roster::buffer& x) { roster::call(p, axpy, y, x); }
