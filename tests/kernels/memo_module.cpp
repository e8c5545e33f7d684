// A module with one CPU kernel of its own, opened and closed by memo_test:
// a remembered kernel lookup must not outlive the module that holds it. The
// entry is made as roster::cpu::kernel makes it, without the CPU backend's
// header, so the module holds no second CPU backend (the test program's is
// the one that runs it).
#include <roster/kernels.hpp>

namespace {
void module_mark(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  double* out = a.data<double>(0);
  for (std::size_t i = begin; i < end; ++i) out[i] = 5.0;
}
constinit const roster::kernel_entry module_mark_entry = roster::kernel_entry_of<roster::write<double>>(
    "memo_module_mark", "cpu", "only", roster::default_variant, roster::payload_of(&roster::host_kernel_of<&module_mark>));
}  // namespace
ROSTER_KERNEL(module_mark_entry);
