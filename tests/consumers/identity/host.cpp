// Acquires the backend named by argv[1], which two libraries register, and
// reports what acquire, check_backends() and the trace say. Exits 0 when
// acquire refused it with errc::conflict, 1 otherwise.
#include <roster/roster.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  auto dev = roster::acquire(argv[1]);
  if (dev) {
    std::printf("acquire: opened %s\n", (*dev)->adapter().spec().c_str());
  } else {
    std::printf("acquire: [%s] %s\n", std::string(to_string(dev.error().code())).c_str(),
                dev.error().message().c_str());
  }
  auto ok = roster::check_backends();
  std::printf("check_backends: %s\n", ok ? "ok" : ok.error().message().c_str());
  (void)roster::circuits();
  for (const auto& line : roster::trace_lines()) std::printf("trace: %s\n", line.c_str());
  return !dev && dev.error().code() == roster::errc::conflict ? 0 : 1;
}
