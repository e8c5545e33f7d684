// The device cache, the circuits, the roles and a backend registered at run
// time, as docs/guide.md shows them. Prints what it finds; fails on any error.
#include <roster/roster.hpp>

#include <cstdio>
#include <iostream>
#include <memory>

namespace {

// A stand-in for a backend of your own: it opens the CPU backend's device.
roster::expected<std::unique_ptr<roster::device>> my_open(std::uint32_t ordinal) {
  return roster::acquire("cpu:" + std::to_string(ordinal));
}
roster::expected<std::vector<roster::adapter_info>> my_enumerate() { return std::vector<roster::adapter_info>{}; }

int cache() {
  roster::program program;
  auto a = roster::get_device("cpu");
  if (!a) { std::cerr << a.error().message() << "\n"; return 1; }
  auto x = (*a)->allocate<double>(16);
  if (!x) { std::cerr << x.error().message() << "\n"; return 1; }
  program.fill(*x, 1.0);

  roster::expected<roster::device*> d = roster::get_device(" CPU:0 ");
  if (!d) { std::cerr << d.error().message() << "\n"; return 1; }
  if (auto ok = (*d)->dispatch(program); !ok) { std::cerr << ok.error().message() << "\n"; return 1; }

  std::printf("get_device: \"cpu\" and \" CPU:0 \" are %s\n", *a == *d ? "one device" : "two devices");
  return *a == *d ? 0 : 1;
}

int run_time_backend() {
  if (auto ok = roster::register_factory("my_backend", &my_open, &my_enumerate, /*rank=*/50); !ok) {
    std::cerr << ok.error().message() << "\n";
    return 1;
  }
  auto d = roster::get_device("MY_BACKEND:0");
  if (!d) { std::cerr << d.error().message() << "\n"; return 1; }
  std::printf("register_factory: my_backend:0 opened %s\n", (*d)->adapter().spec().c_str());
  return 0;
}

int roles() {
  auto list = roster::circuits();
  if (!list) { std::cerr << list.error().message() << "\n"; return 1; }
  for (const roster::circuit& c : *list) {
    std::printf("circuit %zu: %s [%s], %zu alternate(s)\n", c.index, c.adapter.spec().c_str(),
                c.identity().c_str(), c.alternates.size());
  }
  if (const roster::circuit* p = roster::primary()) std::printf("primary: %s\n", p->adapter.spec().c_str());
  roster::device* aux = roster::try_auxiliary_device();  // never null while a CPU backend is linked
  if (aux == nullptr) {
    std::cerr << "no device opens (ROSTER_REQUIRE leaves out the host CPU)\nFix: ROSTER_TRACE=1 shows why each did not\n";
    return 1;
  }
  std::printf("auxiliary device: %s\n", aux->adapter().spec().c_str());
  return 0;
}

int rank() {
  auto b = roster::bind_rank();
  if (!b) { std::cerr << b.error().message() << "\n"; return 1; }
  if (!b->warning.empty()) std::cerr << b->warning << "\n";
  auto d = b->circuit->open();
  if (!d) { std::cerr << d.error().message() << "\n"; return 1; }
  std::printf("bind_rank: circuit %zu, %s\n", b->circuit->index, (*d)->adapter().spec().c_str());
  return 0;
}

int trace() {
  for (const std::string& line : roster::trace_lines()) std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace

int main() { return cache() || run_time_backend() || roles() || rank() || trace(); }
