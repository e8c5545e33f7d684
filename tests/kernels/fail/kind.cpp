// Fails: a number where the signature takes a buffer.
#include <roster/kernels.hpp>

constexpr roster::kernel_ref<roster::read_write<double>, roster::read<double>, roster::scalar<double>> axpy{"axpy"};

void build(roster::program& p, const roster::buffer& y) { roster::call(p, axpy, y, 1.0, 2.0); }
