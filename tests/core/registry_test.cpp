// Registration, the registered-backend view, guarded factories, the grid-sync
// split and the router, with registry test backends defined here.
#include "test_backends.hpp"

#include <roster/backends/cpu.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace {

using roster::expected;
using roster::op_set;
using roster_test::recording_device;

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
  EXPECT_FALSE(e.what().empty()) << e.message();
}

std::vector<roster::adapter_info> one_adapter(std::string_view id) {
  roster::adapter_info a;
  a.backend = std::string(id);
  a.name = "test adapter";
  return {a};
}

// Template of a registry test backend: id, rank, whether it dispatches, its ops.
template <int Rank>
struct base_backend {
  static constexpr int rank = Rank;
  static constexpr bool dispatches = true;
  static constexpr op_set ops = op_set::all();
  using device_type = recording_device;
};

struct test_registry_backend_emits : base_backend<1> {
  static constexpr std::string_view id = "test_registry_backend_emits";
  static constexpr bool dispatches = false;
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return std::make_unique<recording_device>(id, true);
  }
  static expected<std::vector<roster::adapter_info>> enumerate() { return one_adapter(id); }
};

struct test_registry_backend_lacks_dot : base_backend<2> {
  static constexpr std::string_view id = "test_registry_backend_lacks_dot";
  static constexpr op_set ops = op_set::of({roster::op::fill, roster::op::copy, roster::op::mul, roster::op::add,
                                            roster::op::triad, roster::op::grid_sync});
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return std::make_unique<recording_device>(id, true);
  }
  static expected<std::vector<roster::adapter_info>> enumerate() { return one_adapter(id); }
};

struct test_registry_backend_fails_open : base_backend<3> {
  static constexpr std::string_view id = "test_registry_backend_fails_open";
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return roster::make_error(roster::errc::unavailable, "test_registry_backend_fails_open: no device here",
                              "run on a host that has one");
  }
  static expected<std::vector<roster::adapter_info>> enumerate() { return std::vector<roster::adapter_info>{}; }
};

struct test_registry_backend_throws : base_backend<4> {
  static constexpr std::string_view id = "test_registry_backend_throws";
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    throw std::runtime_error("factory exploded");
  }
  static expected<std::vector<roster::adapter_info>> enumerate() { throw std::runtime_error("enumerator exploded"); }
};

struct test_registry_backend_null : base_backend<5> {
  static constexpr std::string_view id = "test_registry_backend_null";
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return std::unique_ptr<recording_device>{};
  }
  static expected<std::vector<roster::adapter_info>> enumerate() { throw 42; }
};

struct test_registry_backend_nosync : base_backend<200> {
  static constexpr std::string_view id = "test_registry_backend_nosync";
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return std::make_unique<recording_device>(id, false);
  }
  static expected<std::vector<roster::adapter_info>> enumerate() { return one_adapter(id); }
};

struct test_registry_backend_native : base_backend<201> {
  static constexpr std::string_view id = "test_registry_backend_native";
  static expected<std::unique_ptr<recording_device>> open(roster::open_key, std::uint32_t) {
    return std::make_unique<recording_device>(id, true);
  }
  static expected<std::vector<roster::adapter_info>> enumerate() { return one_adapter(id); }
};

// A registration with no precedence and no capability entry: ranks last.
expected<std::unique_ptr<roster::device>> open_unranked(roster::open_key, std::uint32_t) {
  return std::unique_ptr<roster::device>(std::make_unique<recording_device>("test_registry_backend_unranked", true));
}
expected<std::vector<roster::adapter_info>> enumerate_unranked() { return one_adapter("test_registry_backend_unranked"); }
constinit const roster::backend_registration unranked_registration{"test_registry_backend_unranked", &open_unranked,
                                                                   &enumerate_unranked, op_set::all()};

}  // namespace

ROSTER_REGISTER_BACKEND(test_registry_backend_emits);
ROSTER_REGISTER_BACKEND(test_registry_backend_lacks_dot);
ROSTER_REGISTER_BACKEND(test_registry_backend_fails_open);
ROSTER_REGISTER_BACKEND(test_registry_backend_throws);
ROSTER_REGISTER_BACKEND(test_registry_backend_null);
ROSTER_REGISTER_BACKEND(test_registry_backend_nosync);
ROSTER_REGISTER_BACKEND(test_registry_backend_native);
ROSTER_SUBMIT(roster::backend_registration, unranked_registration);


namespace {

std::vector<std::string> ids() {
  std::vector<std::string> out;
  for (const auto& b : roster::registered_backends()) out.emplace_back(b.id());
  return out;
}

TEST(registry, registered_backends_sorted_by_rank_then_id) {
  auto all = roster::registered_backends();
  ASSERT_GE(all.size(), 9u);
  for (std::size_t i = 1; i < all.size(); ++i) {
    const auto& a = all[i - 1];
    const auto& b = all[i];
    EXPECT_TRUE(a.rank < b.rank || (a.rank == b.rank && a.id() < b.id()))
        << a.id() << " (" << a.rank << ") before " << b.id() << " (" << b.rank << ")";
  }
  auto v = ids();
  auto at = [&](std::string_view id) { return std::find(v.begin(), v.end(), id) - v.begin(); };
  EXPECT_LT(at("test_registry_backend_emits"), at("test_registry_backend_lacks_dot"));
  EXPECT_LT(at("test_registry_backend_null"), at("cpu"));
  EXPECT_LT(at("cpu"), at("test_registry_backend_nosync"));
  EXPECT_LT(at("test_registry_backend_nosync"), at("test_registry_backend_native"));
}

TEST(registry, backend_without_precedence_ranks_last) {
  auto all = roster::registered_backends();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back().id(), "test_registry_backend_unranked");
  EXPECT_EQ(all.back().rank, roster::unranked);
  EXPECT_TRUE(all.back().dispatches);  // no capability entry: assumed to dispatch
}

TEST(registry, entries_carry_rank_and_capability) {
  for (const auto& b : roster::registered_backends()) {
    if (b.id() == "test_registry_backend_emits") {
      EXPECT_EQ(b.rank, 1);
      EXPECT_FALSE(b.dispatches);
    }
    if (b.id() == "cpu") {
      EXPECT_EQ(b.rank, 100);
      EXPECT_TRUE(b.dispatches);
    }
  }
  EXPECT_TRUE(roster::check_backends());
}

TEST(registry, find_backend_is_case_insensitive) {
  ASSERT_NE(roster::find_backend("CPU"), nullptr);
  EXPECT_EQ(roster::find_backend("Cpu")->id, "cpu");
  EXPECT_EQ(roster::find_backend("no_such_backend"), nullptr);
}

TEST(registry, factory_that_throws_becomes_an_error) {
  ASSERT_NE(roster::find_backend("test_registry_backend_throws"), nullptr);
  auto d = roster::acquire("test_registry_backend_throws:0");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::internal);
  EXPECT_NE(d.error().message().find("factory exploded"), std::string::npos);
  expect_fix(d.error());
  auto cached = roster::get_device("test_registry_backend_throws");
  ASSERT_FALSE(cached);
  expect_fix(cached.error());
}

TEST(registry, factory_returning_null_becomes_an_error) {
  auto d = roster::acquire("test_registry_backend_null:0");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::internal);
  EXPECT_NE(d.error().message().find("returned no device"), std::string::npos);
  expect_fix(d.error());
}

TEST(registry, enumerator_that_throws_becomes_an_error) {
  auto a = roster::enumerate_adapters(*roster::find_backend("test_registry_backend_throws"));
  ASSERT_FALSE(a);
  expect_fix(a.error());
  auto b = roster::enumerate_adapters(*roster::find_backend("test_registry_backend_null"));  // throws an int
  ASSERT_FALSE(b);
  expect_fix(b.error());
}

TEST(registry, failing_factory_error_is_passed_through) {
  auto d = roster::acquire("test_registry_backend_fails_open");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code(), roster::errc::unavailable);
  EXPECT_NE(d.error().message().find("no device here"), std::string::npos);
  expect_fix(d.error());
}

TEST(acquire, unknown_type_and_malformed_spec_are_errors) {
  auto unknown = roster::acquire("no_such_backend:0");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), roster::errc::not_found);
  EXPECT_NE(unknown.error().message().find("cpu"), std::string::npos);  // lists the known types
  expect_fix(unknown.error());
  for (const char* bad : {"", "  ", ":1", "cpu:", "cpu:x", "cpu:-1", "c p u", "cpu:99999999999"}) {
    auto d = roster::acquire(bad);
    ASSERT_FALSE(d) << bad;
    EXPECT_EQ(d.error().code(), roster::errc::invalid_argument) << bad;
    expect_fix(d.error());
  }
  auto cpu1 = roster::acquire("cpu:1");
  ASSERT_FALSE(cpu1);
  EXPECT_EQ(cpu1.error().code(), roster::errc::not_found);
  expect_fix(cpu1.error());
}

TEST(acquire, spec_parsing_normalizes) {
  auto s = roster::parse_spec(" CUDA:12 ");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->backend, "cuda");
  EXPECT_EQ(s->ordinal, 12u);
  EXPECT_EQ(roster::parse_spec("Vulkan")->str(), "vulkan:0");
}

roster::program split_program(roster::device& d, std::vector<roster::buffer>& keep) {
  for (int i = 0; i < 3; ++i) keep.push_back(*d.allocate<double>(16));
  auto r = *d.allocate<double>(1);
  keep.push_back(r);
  roster::program p;
  p.fill(keep[0], 1.0).fill(keep[1], 2.0).grid_sync()
      .copy(keep[2], keep[0]).grid_sync().grid_sync()  // two syncs in a row: no empty piece
      .triad(keep[0], keep[1], keep[2], 0.5).mul(keep[1], keep[0], 2.0).add(keep[2], keep[0], keep[1])
      .grid_sync().dot(r, keep[0], keep[1]).grid_sync();
  return p;
}

TEST(grid_sync_split, device_without_native_sync_receives_pieces_in_order) {
  auto d = roster::acquire("test_registry_backend_nosync");
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_FALSE((*d)->caps().native_grid_sync);
  std::vector<roster::buffer> bufs;
  auto p = split_program(**d, bufs);
  roster_test::recorded_pieces().clear();
  ASSERT_TRUE((*d)->dispatch(p));
  const auto& pieces = roster_test::recorded_pieces();
  using roster::op;
  const std::vector<std::vector<op>> want = {
      {op::fill, op::fill}, {op::copy}, {op::triad, op::mul, op::add}, {op::dot}};
  ASSERT_EQ(pieces.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(pieces[i].size(), want[i].size()) << "piece " << i;
    for (std::size_t k = 0; k < want[i].size(); ++k) {
      EXPECT_EQ(pieces[i][k].op, want[i][k]) << "piece " << i << " step " << k;
      EXPECT_NE(pieces[i][k].op, op::grid_sync);
    }
  }
  // The steps arrive untouched: the first piece's second fill targets bufs[1] with 2.0.
  EXPECT_EQ(pieces[0][1].out, bufs[1]);
  EXPECT_EQ(pieces[0][1].scalar, 2.0);
  // Buffers allocated through the wrapper stay valid for it.
  roster_test::recorded_pieces().clear();
  ASSERT_TRUE((*d)->timed_dispatch(p));
  EXPECT_EQ(roster_test::recorded_pieces().size(), want.size());
}

TEST(grid_sync_split, device_with_native_sync_receives_the_whole_program) {
  auto d = roster::acquire("test_registry_backend_native", {.force_split = false});
  ASSERT_TRUE(d);
  EXPECT_TRUE((*d)->caps().native_grid_sync);
  std::vector<roster::buffer> bufs;
  auto p = split_program(**d, bufs);
  roster_test::recorded_pieces().clear();
  ASSERT_TRUE((*d)->dispatch(p));
  ASSERT_EQ(roster_test::recorded_pieces().size(), 1u);
  EXPECT_EQ(roster_test::recorded_pieces()[0].size(), p.steps().size());
}

TEST(grid_sync_split, force_split_splits_a_native_device) {
  auto d = roster::acquire("test_registry_backend_native", {.force_split = true});
  ASSERT_TRUE(d);
  EXPECT_FALSE((*d)->caps().native_grid_sync);
  std::vector<roster::buffer> bufs;
  auto p = split_program(**d, bufs);
  roster_test::recorded_pieces().clear();
  ASSERT_TRUE((*d)->dispatch(p));
  EXPECT_EQ(roster_test::recorded_pieces().size(), 4u);
}

TEST(grid_sync_split, wrap_false_gives_the_device_as_its_backend_opened_it) {
  auto d = roster::acquire("test_registry_backend_nosync", {.force_split = true, .wrap = false});
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(dynamic_cast<roster::grid_sync_split<roster::device>*>(d->get()), nullptr);
  std::vector<roster::buffer> bufs;
  auto p = split_program(**d, bufs);
  roster_test::recorded_pieces().clear();
  ASSERT_TRUE((*d)->dispatch(p));
  EXPECT_EQ(roster_test::recorded_pieces().size(), 1u) << "no wrapper cut the program";
}

TEST(grid_sync_split, split_at_grid_sync_drops_syncs_and_empty_pieces) {
  roster::program p;
  roster::buffer b{1, 0, roster::element_type::f64, 4};
  p.grid_sync().fill(b, 1).grid_sync().grid_sync().copy(b, b).grid_sync();
  auto pieces = roster::split_at_grid_sync(p.steps());
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].size(), 1u);
  EXPECT_EQ(pieces[0][0].op, roster::op::fill);
  EXPECT_EQ(pieces[1][0].op, roster::op::copy);
}

TEST(router, passes_over_adapters_that_cannot_run_the_program_with_reasons) {
  auto cpu = roster::acquire("cpu");
  ASSERT_TRUE(cpu);
  auto a = *(*cpu)->allocate<float>(8), b = *(*cpu)->allocate<float>(8), r = *(*cpu)->allocate<float>(1);
  roster::program p;
  p.fill(a, 1).fill(b, 2).grid_sync().dot(r, a, b);
  auto routed = roster::acquire_preferred(p);
  ASSERT_TRUE(routed) << routed.error().message();
  ASSERT_NE(routed->device, nullptr);
  // The router is the decision: the same adapter decide() names for the program.
  roster::decision_request req;
  req.program = &p;
  auto decided = roster::decide(req);
  ASSERT_TRUE(decided);
  EXPECT_EQ(routed->device->adapter().spec(), decided->spec.str());
  auto reason = [&](std::string_view spec) -> std::string {
    for (const auto& x : routed->decision.passed)
      if (x.spec == spec) return x.reason;
    return "(not passed over)";
  };
  EXPECT_NE(reason("test_registry_backend_emits:0").find("emits code only"), std::string::npos);
  EXPECT_NE(reason("test_registry_backend_lacks_dot:0").find("does not run 'dot'"), std::string::npos);
  EXPECT_NE(routed->backend, "test_registry_backend_emits");
  EXPECT_NE(routed->backend, "test_registry_backend_lacks_dot");
}

TEST(router, program_without_dot_may_use_the_backend_lacking_dot) {
  auto cpu = roster::acquire("cpu");
  ASSERT_TRUE(cpu);
  auto a = *(*cpu)->allocate<double>(8);
  roster::program p;
  p.fill(a, 1);
  auto routed = roster::acquire_preferred(p);
  ASSERT_TRUE(routed);
  EXPECT_EQ(routed->backend, "test_registry_backend_lacks_dot");
}

TEST(router, the_op_set_is_the_one_source_of_the_built_in_ops_a_backend_runs) {
  // ROSTER_REGISTER_BACKEND places one kernel entry per op of the op set and
  // element type: lacks_dot's op set has fill, not nstream or dot.
  auto has_entry = [](std::string_view op) {
    return roster::find_kernel(op, "test_registry_backend_lacks_dot", roster::element_type::f64).has_value();
  };
  EXPECT_TRUE(has_entry("fill"));
  EXPECT_TRUE(has_entry("grid_sync"));
  EXPECT_FALSE(has_entry("nstream"));
  EXPECT_FALSE(has_entry("dot"));
  auto cpu = roster::acquire("cpu");
  ASSERT_TRUE(cpu);
  auto a = *(*cpu)->allocate<double>(8), b = *(*cpu)->allocate<double>(8);
  roster::program p;
  p.fill(a, 1).nstream(a, b, b, 2.0);
  auto routed = roster::acquire_preferred(p);
  ASSERT_TRUE(routed) << routed.error().message();
  EXPECT_NE(routed->backend, "test_registry_backend_lacks_dot");
  std::string reason;
  for (const auto& x : routed->decision.passed)
    if (x.spec == "test_registry_backend_lacks_dot:0") reason = x.reason;
  // The reason names what to add.
  EXPECT_EQ(reason, "does not run 'nstream': its op set lacks it (add them to the backend type's ops)");
  // By op set alone, before any buffer exists: the same rule.
  auto by_ops = roster::acquire_preferred(roster::op_set::of({roster::op::nstream}), roster::element_type::f64);
  ASSERT_TRUE(by_ops) << by_ops.error().message();
  EXPECT_EQ(by_ops->backend, routed->backend);
  // A call of the built-in op by name is checked the same way.
  roster::program q;
  q.call("nstream", {a, b, b}, {2.0});
  auto routed_call = roster::acquire_preferred(q);
  ASSERT_TRUE(routed_call) << routed_call.error().message();
  EXPECT_EQ(routed_call->backend, routed->backend);
  // With only fill, the backend that runs it is taken.
  roster::program r;
  r.call("fill", {a}, {1.0});
  auto routed_fill = roster::acquire_preferred(r);
  ASSERT_TRUE(routed_fill) << routed_fill.error().message();
  EXPECT_EQ(routed_fill->backend, "test_registry_backend_lacks_dot");
}

TEST(router, a_registration_that_places_no_kernel_entry_runs_its_op_set) {
  // A registration submitted by hand (no ROSTER_REGISTER_BACKEND) places no
  // kernel entries: its op set stands for its built-in ops, calls included.
  EXPECT_FALSE(roster::find_kernel("fill", "test_registry_backend_unranked", roster::element_type::f64));
  auto d = roster::acquire("test_registry_backend_unranked");
  ASSERT_TRUE(d) << d.error().message();
  auto a = (*d)->allocate<double>(8);
  ASSERT_TRUE(a);
  roster::program p;
  p.call("fill", {*a}, {1.0});
  EXPECT_TRUE((*d)->dispatch(p)) << "a call of a built-in op on a backend with no entries";
}

TEST(router, invalid_program_is_an_error) {
  roster::program empty;
  auto routed = roster::acquire_preferred(empty);
  ASSERT_FALSE(routed);
  expect_fix(routed.error());
}

}  // namespace

TEST(device, double_program_on_a_device_without_doubles_is_refused_by_dispatch_and_timed_dispatch) {
  roster_test::recording_device d("test_registry_backend_nof64", true);
  auto a = d.allocate<double>(8);
  ASSERT_TRUE(a);
  d.set_f64(false);
  roster::program p;
  p.fill(*a, 1.0);
  auto r1 = d.dispatch(p);
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().code(), roster::errc::unsupported);
  EXPECT_NE(r1.error().message().find("\nFix: "), std::string::npos);
  auto r2 = d.timed_dispatch(p);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().code(), roster::errc::unsupported);
  EXPECT_NE(r2.error().message().find("\nFix: "), std::string::npos);
  EXPECT_FALSE(d.allocate<double>(8));
}

namespace {
// A registry test device whose backend code throws from every entry point.
class test_registry_throwing_device final : public roster::device {
 public:
  test_registry_throwing_device() { info_.backend = "test_registry_backend_throwing"; }
  const roster::adapter_info& adapter() const noexcept override { return info_; }
  roster::device_caps caps() const noexcept override { return {true, true, roster::op_set::all()}; }
  roster::expected<void> synchronize() override { return {}; }
  roster::expected<void> dispatch_steps(std::span<const roster::step>) override {
    throw std::runtime_error("dispatch blew up");
  }
  bool throw_on_allocate = false;

 protected:
  roster::expected<std::uint32_t> do_allocate(roster::element_type, std::size_t) override {
    if (throw_on_allocate) throw std::bad_alloc();
    return 0u;
  }
  roster::expected<void> do_release(std::uint32_t) override { throw 42; }
  bool owns(const roster::buffer& b) const noexcept override { return b.slot == 0; }
  roster::expected<void> do_upload(const roster::buffer&, const void*) override {
    throw std::logic_error("upload blew up");
  }
  roster::expected<void> do_download(const roster::buffer&, void*) override {
    throw std::logic_error("download blew up");
  }

 private:
  roster::adapter_info info_;
};
}  // namespace

TEST(device, backend_code_that_throws_becomes_an_error_with_a_fix) {
  test_registry_throwing_device d;
  auto a = d.allocate<double>(4);
  ASSERT_TRUE(a);
  roster::program p;
  p.fill(*a, 1.0);
  auto check = [](const auto& r, roster::errc code, std::string_view says) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), code);
    EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find("\nFix: "), std::string::npos);
  };
  check(d.dispatch(p), roster::errc::internal, "dispatch blew up");
  check(d.timed_dispatch(p), roster::errc::internal, "dispatch blew up");
  std::vector<double> host(4);
  check(d.upload<double>(*a, host), roster::errc::internal, "upload blew up");
  check(d.download<double>(*a, std::span<double>(host)), roster::errc::internal, "download blew up");
  check(d.release(*a), roster::errc::internal, "non-standard exception");
  d.throw_on_allocate = true;
  check(d.allocate<double>(4), roster::errc::out_of_memory, "out of host memory");
}

TEST(router, routes_by_ops_and_type_before_any_buffer_exists) {
  using roster::op;
  auto with_dot = roster::acquire_preferred(roster::op_set::of({op::fill, op::dot}), roster::element_type::f64);
  ASSERT_TRUE(with_dot) << with_dot.error().message();
  EXPECT_NE(with_dot->backend, "test_registry_backend_lacks_dot");
  auto without_dot = roster::acquire_preferred(roster::op_set::of({op::fill}), roster::element_type::f32);
  ASSERT_TRUE(without_dot) << without_dot.error().message();
  EXPECT_EQ(without_dot->backend, "test_registry_backend_lacks_dot");
  // The routed device then allocates the program's buffers and runs it (the
  // host CPU, by strict mode: the registry test devices compute nothing).
  ::setenv("ROSTER_REQUIRE", "cpu", 1);
  roster::rescan();
  auto on_cpu = roster::acquire_preferred(roster::op_set::of({op::fill, op::dot}), roster::element_type::f64);
  ::unsetenv("ROSTER_REQUIRE");
  roster::rescan();
  ASSERT_TRUE(on_cpu) << on_cpu.error().message();
  EXPECT_EQ(on_cpu->backend, "cpu");
  auto a = on_cpu->device->allocate<double>(4), r = on_cpu->device->allocate<double>(1);
  ASSERT_TRUE(a && r);
  roster::program p;
  p.fill(*a, 2.0).grid_sync().dot(*r, *a, *a);
  ASSERT_TRUE(on_cpu->device->dispatch(p));
  std::vector<double> out(1);
  ASSERT_TRUE(on_cpu->device->download<double>(*r, std::span<double>(out)));
  EXPECT_EQ(out[0], 16.0);
}
