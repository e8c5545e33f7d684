// Every public route to a device, against strict mode (ROSTER_REQUIRE) and the
// grid-sync split: a route that went around the one open path would hand out
// a device the requirement refuses, or a device without native grid sync
// whose programs are not cut. Links roster and nothing else: the two test
// backends here are the only ones registered.
#include "../core/test_backends.hpp"

#include <roster/roster.hpp>
#include <roster/static_registry.hpp>

#include <boost/hana/string.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <type_traits>

namespace {

using roster::expected;
using roster_test::recording_device;

std::vector<roster::adapter_info> adapter_of(std::string_view id, roster::device_type type, std::uint8_t tag) {
  return {recording_device(id, false, type, tag).adapter()};
}

// A discrete GPU and a host CPU, neither with native grid sync; the GPU ranks first.
struct test_routes_gpu {
  static constexpr std::string_view id = "test_routes_gpu";
  static constexpr int rank = 10;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = recording_device;
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return std::make_unique<recording_device>(id, false, roster::device_type::discrete_gpu, 1);
  }
  static expected<std::vector<roster::adapter_info>> enumerate() {
    return adapter_of(id, roster::device_type::discrete_gpu, 1);
  }
};

struct test_routes_host {
  static constexpr std::string_view id = "test_routes_host";
  static constexpr int rank = 20;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = recording_device;
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return std::make_unique<recording_device>(id, false, roster::device_type::cpu, 2);
  }
  static expected<std::vector<roster::adapter_info>> enumerate() {
    return adapter_of(id, roster::device_type::cpu, 2);
  }
};

using registry = roster::static_registry<test_routes_gpu, test_routes_host>;

}  // namespace

ROSTER_REGISTER_BACKEND(test_routes_gpu);
ROSTER_REGISTER_BACKEND(test_routes_host);

namespace {

// No code outside roster's open path can make the key a backend's open() takes.
static_assert(!std::is_default_constructible_v<roster::open_key>);

// Sets or clears a variable and drops what was derived from the environment.
void set_env(const char* name, const char* value) {
  if (value != nullptr)
    ::setenv(name, value, 1);
  else
    ::unsetenv(name);
  roster::rescan();
}

class routes : public ::testing::Test {
 protected:
  void SetUp() override {
    set_env("ROSTER_REQUIRE", nullptr);
    set_env("ROSTER_DEVICE", nullptr);
    set_env("ROSTER_DEVICE_SELECTOR", nullptr);
  }
  void TearDown() override { SetUp(); }

  // Runs fill, grid_sync, copy and returns the number of pieces the recording device received.
  template <class D>
  static std::size_t pieces_of(D& d, bool static_dispatch) {
    auto a = d.template allocate<double>(8);
    auto b = d.template allocate<double>(8);
    EXPECT_TRUE(a && b);
    roster::program p;
    p.fill(*a, 1.0).grid_sync().copy(*b, *a);
    roster_test::recorded_pieces().clear();
    expected<void> ok{};
    if constexpr (roster::static_device<D>)
      ok = static_dispatch ? roster::dispatch_static(d, p) : d.dispatch(p);
    else
      ok = d.dispatch(p);
    EXPECT_TRUE(ok) << (ok ? "" : ok.error().message());
    return roster_test::recorded_pieces().size();
  }
  static void expect_refused(const roster::error& e, const std::string& route) {
    EXPECT_NE(e.message().find("strict mode"), std::string::npos) << route << ": " << e.message();
    EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << route << ": " << e.message();
  }
  static const roster::circuit& circuit_of(std::string_view backend) {
    auto list = roster::circuits();
    EXPECT_TRUE(list);
    for (const auto& c : *list)
      if (c.adapter.backend == backend) return c;
    ADD_FAILURE() << "no circuit for " << backend;
    return list->front();
  }
};

// The routes that open a named device: each refuses the host under ROSTER_REQUIRE=gpu.
TEST_F(routes, every_route_that_names_a_device_refuses_it_in_strict_mode) {
  const roster::circuit& host = circuit_of("test_routes_host");  // listed before the requirement is set
  ::setenv("ROSTER_REQUIRE", "gpu", 1);                            // no rescan: the open path reads it
  if (auto d = roster::acquire("test_routes_host"); !d) expect_refused(d.error(), "acquire");
  else ADD_FAILURE() << "acquire opened " << (*d)->adapter().spec();
  if (auto d = roster::get_device("test_routes_host:0"); !d) expect_refused(d.error(), "get_device");
  else ADD_FAILURE() << "get_device opened " << (*d)->adapter().spec();
  if (auto d = host.open(); !d) expect_refused(d.error(), "circuit::open");
  else ADD_FAILURE() << "circuit::open opened " << (*d)->adapter().spec();
  if (auto d = roster::open_as<test_routes_host>(); !d) expect_refused(d.error(), "open_as");
  else ADD_FAILURE() << "open_as opened " << (*d)->adapter().spec();
  if (auto d = registry::open<"test_routes_host">(); !d) expect_refused(d.error(), "static_registry::open<id>");
  else ADD_FAILURE() << "static_registry::open<id> opened " << (*d)->adapter().spec();
  if (auto d = registry::open(BOOST_HANA_STRING("test_routes_host")); !d)
    expect_refused(d.error(), "static_registry::open(s)");
  else ADD_FAILURE() << "static_registry::open(s) opened " << (*d)->adapter().spec();
  set_env("ROSTER_DEVICE", "test_routes_host:0");
  if (auto d = roster::default_device(); !d) expect_refused(d.error(), "default_device (ROSTER_DEVICE)");
  else ADD_FAILURE() << "default_device opened " << (*d)->adapter().spec();
  // The GPU satisfies the requirement on the same routes.
  EXPECT_TRUE(roster::acquire("test_routes_gpu"));
  EXPECT_TRUE(roster::open_as<test_routes_gpu>());
  EXPECT_TRUE(registry::open<"test_routes_gpu">());
}

// The routes that choose a device: under ROSTER_REQUIRE=cpu the host, though the GPU ranks first.
TEST_F(routes, every_route_that_chooses_a_device_keeps_to_the_requirement) {
  for (const char* require : {"cpu", "gpu"}) {
    set_env("ROSTER_REQUIRE", require);
    const std::string want = std::string(require) == "cpu" ? "test_routes_host:0" : "test_routes_gpu:0";
    auto d = roster::default_device();
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ((*d)->adapter().spec(), want) << "default_device, ROSTER_REQUIRE=" << require;
    roster::device* p = roster::try_primary_device();
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->adapter().spec(), want) << "try_primary_device, ROSTER_REQUIRE=" << require;
    auto routed = roster::acquire_preferred(roster::op_set::of({roster::op::triad}), roster::element_type::f64);
    ASSERT_TRUE(routed) << routed.error().message();
    EXPECT_EQ(routed->device->adapter().spec(), want) << "acquire_preferred(ops), ROSTER_REQUIRE=" << require;
    roster::program prog;
    auto a = routed->device->allocate<double>(4);
    ASSERT_TRUE(a);
    prog.fill(*a, 2.0);
    auto by_program = roster::acquire_preferred(prog);
    ASSERT_TRUE(by_program) << by_program.error().message();
    EXPECT_EQ(by_program->device->adapter().spec(), want) << "acquire_preferred(program), ROSTER_REQUIRE=" << require;
    auto b = roster::bind_rank();
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->circuit->adapter.spec(), want) << "bind_rank, ROSTER_REQUIRE=" << require;
    // One circuit is left: the auxiliary role falls back to it.
    roster::device* aux = roster::try_auxiliary_device();
    ASSERT_NE(aux, nullptr);
    EXPECT_EQ(aux->adapter().spec(), want) << "try_auxiliary_device, ROSTER_REQUIRE=" << require;
  }
}

// Every route that hands out a roster::device cuts programs at their grid_syncs
// on a device without native grid sync; open_as and the static registry hand
// out the backend's own class, and static dispatch cuts them.
TEST_F(routes, every_route_cuts_programs_on_a_device_without_native_sync) {
  auto acquired = roster::acquire("test_routes_gpu");
  ASSERT_TRUE(acquired);
  EXPECT_EQ(pieces_of(**acquired, false), 2u) << "acquire";
  auto cached = roster::get_device("test_routes_gpu:0");
  ASSERT_TRUE(cached);
  EXPECT_EQ(pieces_of(**cached, false), 2u) << "get_device";
  auto opened = circuit_of("test_routes_gpu").open();
  ASSERT_TRUE(opened);
  EXPECT_EQ(pieces_of(**opened, false), 2u) << "circuit::open";
  auto dflt = roster::default_device();
  ASSERT_TRUE(dflt);
  EXPECT_EQ(pieces_of(**dflt, false), 2u) << "default_device";
  roster::device* primary = roster::try_primary_device();
  ASSERT_NE(primary, nullptr);
  EXPECT_EQ(pieces_of(*primary, false), 2u) << "try_primary_device";
  roster::device* aux = roster::try_auxiliary_device();
  ASSERT_NE(aux, nullptr);
  EXPECT_EQ(aux->adapter().spec(), "test_routes_host:0");
  EXPECT_EQ(pieces_of(*aux, false), 2u) << "try_auxiliary_device";
  auto routed = roster::acquire_preferred(roster::op_set::of({roster::op::triad}), roster::element_type::f64);
  ASSERT_TRUE(routed);
  EXPECT_EQ(pieces_of(*routed->device, false), 2u) << "acquire_preferred(ops)";
  auto x = (*acquired)->allocate<double>(4);
  ASSERT_TRUE(x);
  roster::program fill;
  fill.fill(*x, 1.0);
  auto by_program = roster::acquire_preferred(fill);
  ASSERT_TRUE(by_program);
  EXPECT_EQ(pieces_of(*by_program->device, false), 2u) << "acquire_preferred(program)";
  auto own = roster::open_as<test_routes_gpu>();
  ASSERT_TRUE(own);
  EXPECT_EQ(pieces_of(**own, true), 2u) << "open_as, dispatch_static";
  auto listed = registry::open<"test_routes_gpu">();
  ASSERT_TRUE(listed);
  EXPECT_EQ(pieces_of(**listed, true), 2u) << "static_registry::open<id>, dispatch_static";
  auto by_string = registry::open(BOOST_HANA_STRING("test_routes_gpu"));
  ASSERT_TRUE(by_string);
  EXPECT_EQ(pieces_of(**by_string, true), 2u) << "static_registry::open(s), dispatch_static";
  // Control: the backend's own class, dispatched through its virtual call, is not cut.
  EXPECT_EQ(pieces_of(**own, false), 1u) << "the unwrapped device";
}

}  // namespace
