// Variants and measured choice: the decision rule on recorded timings,
// tune_kernel on the CPU (a deliberately wrong variant is refused and never
// chosen), kernel choices in the tuning file (round trip, older files, the
// merge), and the recorded winner running when a call names no variant.
#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include "../support/cpu_test_kernels.hpp"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using roster_test::twice;
using roster_test::twice_by_add;
using roster_test::twice_wrong_for_tests;

ROSTER_CPU_KERNEL("twice", "plain", roster::default_variant, twice, roster::write<roster::elem>,
                  roster::read<roster::elem>);
ROSTER_CPU_KERNEL("twice", "by_add", roster::other_variant, twice_by_add, roster::write<roster::elem>,
                  roster::read<roster::elem>);
ROSTER_CPU_KERNEL("twice", "wrong_for_tests", roster::other_variant, twice_wrong_for_tests,
                  roster::write<roster::elem>, roster::read<roster::elem>);

// Two variants that write different marks, so a test sees which one ran.
template <int Mark>
void mark(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  double* out = a.data<double>(0);
  for (std::size_t i = begin; i < end; ++i) out[i] = Mark;
}
constinit const roster::kernel_entry mark_one =
    roster::cpu::kernel<&mark<1>, roster::write<double>>("variant_mark", "one", roster::default_variant);
constinit const roster::kernel_entry mark_two =
    roster::cpu::kernel<&mark<2>, roster::write<double>>("variant_mark", "two", roster::other_variant);
ROSTER_KERNEL(mark_one);
ROSTER_KERNEL(mark_two);

// Users' variants of the built-in triad (a[i] = b[i] + s * c[i]), beside the
// CPU backend's own entry (variant "builtin", the default): one correct but
// slower (it runs the loop four times), one wrong. Each run is counted, so a
// test sees which loop ran.
std::atomic<int> user_triad_runs{0};
template <class T>
void triad_slow(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  user_triad_runs.fetch_add(1, std::memory_order_relaxed);
  T* out = a.data<T>(0);
  const T* b = a.data<const T>(1);
  const T* c = a.data<const T>(2);
  const T s = a.scalar<T>(0);
  for (int pass = 0; pass < 4; ++pass) {
    for (std::size_t i = begin; i < end; ++i) out[i] = b[i] + s * c[i];
    asm volatile("" ::: "memory");  // each pass is done again
  }
}
template <class T>
void triad_wrong(const roster::kernel_args& a, std::size_t begin, std::size_t end) {
  T* out = a.data<T>(0);
  const T* b = a.data<const T>(1);
  const T* c = a.data<const T>(2);
  const T s = a.scalar<T>(0);
  for (std::size_t i = begin; i < end; ++i) out[i] = b[i] + (s + 1) * c[i];
}
ROSTER_CPU_KERNEL("triad", "user_slow", roster::other_variant, triad_slow, roster::write<roster::elem>,
                  roster::read<roster::elem>, roster::read<roster::elem>, roster::scalar<roster::elem>);
ROSTER_CPU_KERNEL("triad", "user_wrong", roster::other_variant, triad_wrong, roster::write<roster::elem>,
                  roster::read<roster::elem>, roster::read<roster::elem>, roster::scalar<roster::elem>);

roster::variant_timing timing(std::string name, double median, double spread, bool wrong = false) {
  roster::variant_timing t;
  t.variant = std::move(name);
  t.median_ns = median;
  t.spread = spread;
  if (wrong) t.wrong = roster::error(roster::errc::device_fault, "wrong", "fix it");
  return t;
}

TEST(VariantDecision, ThreePercentWithinFivePercentSpreadIsNotChosen) {
  const roster::variant_timing v[] = {timing("plain", 100.0, 0.05), timing("fast", 97.0, 0.05)};
  const auto c = roster::choose_variant(v, "plain");
  EXPECT_EQ(c.variant, "plain");
  EXPECT_EQ(c.baseline, "plain");
  EXPECT_DOUBLE_EQ(c.variant_ns, 100.0);
}

TEST(VariantDecision, TwentyPercentWithOnePercentSpreadIsChosen) {
  const roster::variant_timing v[] = {timing("plain", 100.0, 0.01), timing("fast", 80.0, 0.01)};
  const auto c = roster::choose_variant(v, "plain");
  EXPECT_EQ(c.variant, "fast");
  EXPECT_DOUBLE_EQ(c.variant_ns, 80.0);
  EXPECT_DOUBLE_EQ(c.baseline_ns, 100.0);
}

TEST(VariantDecision, BelowTheMinimumGainIsNotChosenEvenWithoutSpread) {
  const roster::variant_timing v[] = {timing("plain", 100.0, 0.0), timing("fast", 98.0, 0.0)};
  EXPECT_EQ(roster::choose_variant(v, "plain").variant, "plain");
}

TEST(VariantDecision, TheFastestOfSeveralWinnersIsChosenAndAWrongOneNever) {
  const roster::variant_timing v[] = {timing("plain", 100.0, 0.01), timing("good", 80.0, 0.01),
                                      timing("better", 70.0, 0.01), timing("wrong", 10.0, 0.0, true)};
  EXPECT_EQ(roster::choose_variant(v, "plain").variant, "better");
}

// Points the default tuning file at a fresh folder for one test.
struct tuning_home {
  std::string dir, path;
  tuning_home() {
    char tmpl[] = "/tmp/roster-variants-XXXXXX";
    dir = ::mkdtemp(tmpl);
    ::setenv("XDG_CACHE_HOME", dir.c_str(), 1);
    path = dir + "/roster/tuning.json";
    roster::reload_tuning();
  }
  ~tuning_home() {
    ::unsetenv("XDG_CACHE_HOME");
    roster::reload_tuning();
    std::filesystem::remove_all(dir);
  }
};

// Opens the CPU with the records of the default tuning file (acquire reads
// none itself: they come through its options).
std::unique_ptr<roster::device> open_cpu(roster::acquire_options o = {}) {
  if (o.tuning.empty()) o.tuning = roster::current_tuning();
  auto d = roster::acquire("cpu:0", o);
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : nullptr;
}

TEST(TuneKernel, TimesEveryVariantAndRefusesTheWrongOne) {
  auto d = open_cpu(roster::acquire_options{.wrap = false});
  ASSERT_TRUE(d);
  for (auto type : {roster::element_type::f32, roster::element_type::f64}) {
    auto t = roster::tune_kernel(*d, "twice", type, 4096, roster::tune_options{.reps = 5});
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_EQ(t->variants.size(), 3u);
    for (const auto& v : t->variants) {
      EXPECT_EQ(v.is_default, v.variant == "plain");
      if (v.variant == "wrong_for_tests") {
        ASSERT_TRUE(v.wrong.has_value());
        EXPECT_NE(v.wrong->message().find("variant 'wrong_for_tests' is wrong"), std::string::npos)
            << v.wrong->message();
        EXPECT_FALSE(v.wrong->fix().empty());
        EXPECT_TRUE(v.ns.empty());  // never timed
      } else {
        EXPECT_FALSE(v.wrong.has_value()) << v.wrong->message();
        EXPECT_EQ(v.ns.size(), 5u);
        EXPECT_GT(v.median_ns, 0.0);
      }
    }
    EXPECT_EQ(t->refused().size(), 1u);
    EXPECT_NE(t->choice.variant, "wrong_for_tests");
    EXPECT_EQ(t->choice.baseline, "plain");
    EXPECT_EQ(t->choice.op, "twice");
    EXPECT_EQ(t->choice.type, type);
    EXPECT_EQ(t->choice.size_class, 12u);
  }
}

TEST(TuneKernel, ChecksAgainstTheCallersReference) {
  auto d = open_cpu(roster::acquire_options{.wrap = false});
  ASSERT_TRUE(d);
  // The caller's reference agrees with the correct variants.
  auto t = roster::tune_kernel(*d, "twice", roster::element_type::f64, 100,
                               roster::tune_options{.reps = 2, .reference = &twice_by_add<double>});
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->refused().size(), 1u);  // only the wrong one: the reference agrees with the others
  auto bad = roster::tune_kernel(*d, "twice", roster::element_type::f64, 100,
                                 roster::tune_options{.reps = 2, .reference = &twice_wrong_for_tests<double>});
  // A reference the default disagrees with: no choice at all.
  ASSERT_FALSE(bad);  // the default disagrees with the reference: no choice at all
  EXPECT_NE(bad.error().message().find("variant 'plain' is wrong"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("\nFix: "), std::string::npos);
}

TEST(TuneKernel, AnOpWithoutAKernelHereIsAnError) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto t = roster::tune_kernel(*d, "no_such_op", roster::element_type::f64, 100);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find("\nFix: "), std::string::npos);
}

TEST(TuneKernel, AWrongVariantIsNeverRecorded) {
  tuning_home home;
  auto d = open_cpu(roster::acquire_options{.wrap = false});
  ASSERT_TRUE(d);
  auto t = roster::tune_kernel(*d, "twice", roster::element_type::f64, 1 << 12, roster::tune_options{.reps = 3});
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_TRUE(roster::record_kernel_choices(d->adapter(), std::span(&t->choice, 1), home.path));
  auto file = roster::load_tuning(home.path);
  ASSERT_TRUE(file) << file.error().message();
  ASSERT_EQ(file->records.size(), 1u);
  ASSERT_EQ(file->records[0].kernels.size(), 1u);
  EXPECT_NE(file->records[0].kernels[0].variant, "wrong_for_tests");
  EXPECT_EQ(file->records[0].kernels[0], t->choice);
}

roster::kernel_choice choice(std::string op, std::uint32_t cls, std::string variant) {
  roster::kernel_choice c;
  c.op = std::move(op);
  c.type = roster::element_type::f64;
  c.size_class = cls;
  c.variant = std::move(variant);
  c.baseline = "one";
  c.variant_ns = 800.0;
  c.baseline_ns = 1000.25;
  c.spread = 0.0125;
  return c;
}

TEST(KernelChoiceRecords, RoundTripThroughTheFile) {
  roster::tuning_file f;
  roster::tuning_record r;
  r.backend = "cpu";
  r.device = "cpu/host";
  r.driver_version = "1";
  r.figures = {{roster::op::triad, roster::element_type::f64, 12.5}};
  r.kernels = {choice("variant_mark", 10, "two"), choice("twice", 20, "by_add")};
  r.kernels[1].type = roster::element_type::f32;
  f.records.push_back(r);
  auto back = roster::parse_tuning(roster::to_json(f));
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->records.size(), 1u);
  EXPECT_EQ(back->records[0], r);
}

TEST(KernelChoiceRecords, AFileWithoutKernelsLoads) {
  // Written before variants were recorded: no "kernels" field.
  const std::string old = R"({"format": "roster-tuning", "version": 1, "records": [
    {"backend": "cpu", "device": "cpu/host", "driver": "1", "spec": "cpu:0", "name": "host",
     "measured_at": "2026-11-29T19:00:00Z", "elements": 1024, "reps": 5,
     "gbps": {"double": {"triad": 12.5}}, "grid_sync": {"native_ns": 100, "split_ns": 90, "spread": 0.01}}]})";
  auto f = roster::parse_tuning(old);
  ASSERT_TRUE(f) << f.error().message();
  ASSERT_EQ(f->records.size(), 1u);
  EXPECT_TRUE(f->records[0].kernels.empty());
  EXPECT_EQ(f->records[0].bandwidth(roster::op::triad, roster::element_type::f64), 12.5);
  // A malformed entry is an error with a Fix, not a silent skip.
  std::string bad = old;
  bad.replace(bad.find("\"gbps\""), 0, "\"kernels\": [{\"op\": \"x\"}], ");
  auto b = roster::parse_tuning(bad);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("\"kernels\""), std::string::npos) << b.error().message();
}

TEST(KernelChoiceRecords, AKernelRecordKeepsTheBenchFiguresAndADriverChangeDropsOldChoices) {
  tuning_home home;
  auto d = open_cpu();
  ASSERT_TRUE(d);
  const auto& a = d->adapter();
  roster::tuning_record bench;
  bench.backend = a.backend;
  bench.device = roster::tuning_device_key(a);
  bench.driver_version = a.driver_version;
  bench.figures = {{roster::op::triad, roster::element_type::f64, 12.5}};
  bench.sync_shapes = {{"copy|dot", 1000.0, 900.0, 0.01}};
  ASSERT_TRUE(roster::save_tuning(home.path, std::span(&bench, 1)));
  bench.sync_shapes.clear();  // a later bench that measures no shape keeps the measured one
  const auto c = choice("variant_mark", 10, "two");
  ASSERT_TRUE(roster::record_kernel_choices(a, std::span(&c, 1), home.path));
  auto f = roster::load_tuning(home.path);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->records.size(), 1u);
  EXPECT_EQ(f->records[0].bandwidth(roster::op::triad, roster::element_type::f64), 12.5);
  ASSERT_EQ(f->records[0].sync_shapes.size(), 1u);
  EXPECT_EQ(f->records[0].sync_shapes[0].shape, "copy|dot");
  ASSERT_EQ(f->records[0].kernels.size(), 1u);
  // A later bench under the same driver keeps the choice; under another, not.
  ASSERT_TRUE(roster::save_tuning(home.path, std::span(&bench, 1)));
  f = roster::load_tuning(home.path);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->records[0].kernels.size(), 1u);
  EXPECT_EQ(f->records[0].sync_shapes.size(), 1u);
  bench.driver_version += "-new";
  ASSERT_TRUE(roster::save_tuning(home.path, std::span(&bench, 1)));
  f = roster::load_tuning(home.path);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->records[0].kernels.empty());
  EXPECT_TRUE(f->records[0].sync_shapes.empty());
}

// Runs variant_mark without naming a variant on a device from acquire;
// returns the mark it wrote.
double mark_written(std::size_t n) {
  auto d = open_cpu();
  if (!d) return -1;
  auto out = d->allocate<double>(n);
  if (!out) return -1;
  roster::program p;
  p.call("variant_mark", {*out}, {});
  if (auto ok = d->dispatch(p); !ok) {
    ADD_FAILURE() << ok.error().message();
    return -1;
  }
  std::vector<double> host(n);
  if (!d->download(*out, std::span<double>(host))) return -1;
  return host[n - 1];
}

TEST(KernelChoiceApplied, TheRecordedWinnerRuns) {
  tuning_home home;
  auto d = open_cpu();
  ASSERT_TRUE(d);
  const auto c = choice("variant_mark", roster::size_class(1000), "two");  // 2^9 .. 2^10 - 1
  ASSERT_TRUE(roster::record_kernel_choices(d->adapter(), std::span(&c, 1), home.path));
  EXPECT_EQ(mark_written(1000), 2.0);
  EXPECT_EQ(mark_written(600), 2.0);    // the same size class
  EXPECT_EQ(mark_written(1024), 1.0);   // another size class: the default
  // ROSTER_TRACE says which variant a record chose.
  ::setenv("ROSTER_TRACE", "1", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(mark_written(1000), 2.0);
  const std::string err = testing::internal::GetCapturedStderr();
  ::unsetenv("ROSTER_TRACE");
  EXPECT_NE(err.find("kernel 'variant_mark' double size class 2^9: variant 'two' by record"), std::string::npos)
      << err;
  // A call that names a variant runs it, whatever the record says.
  auto dev = open_cpu();
  ASSERT_TRUE(dev);
  auto out = dev->allocate<double>(1000);
  ASSERT_TRUE(out);
  roster::program p;
  p.call("variant_mark", {*out}, {}, roster::call_options{.variant = "one"});
  ASSERT_TRUE(dev->dispatch(p));
  std::vector<double> host(1000);
  ASSERT_TRUE(dev->download(*out, std::span<double>(host)));
  EXPECT_EQ(host[0], 1.0);
}

TEST(KernelChoiceApplied, NoRecordRunsTheDefault) {
  tuning_home home;
  EXPECT_EQ(mark_written(1000), 1.0);
}

TEST(KernelChoiceApplied, AStaleDriverRecordIsIgnored) {
  tuning_home home;
  auto d = open_cpu();
  ASSERT_TRUE(d);
  roster::adapter_info then = d->adapter();
  then.driver_version += "-old";
  const auto c = choice("variant_mark", roster::size_class(1000), "two");
  ASSERT_TRUE(roster::record_kernel_choices(then, std::span(&c, 1), home.path));
  EXPECT_EQ(mark_written(1000), 1.0);
}

TEST(KernelChoiceApplied, ChoicesReachTheDeviceInsideTheSplitWrapper) {
  auto d = open_cpu(roster::acquire_options{.force_split = true});
  ASSERT_TRUE(d);
  static const roster::kernel_choice c = choice("variant_mark", roster::size_class(100), "two");
  d->use_kernel_choices(std::span(&c, 1));
  auto out = d->allocate<double>(100);
  ASSERT_TRUE(out);
  roster::program q;
  q.call("variant_mark", {*out}, {});
  auto k = d->kernel_for(*q.steps().front().call);  // the wrapper answers as the device inside it
  ASSERT_TRUE(k) << k.error().message();
  EXPECT_EQ((*k)->variant, "two");
  ASSERT_TRUE(out);
  roster::program p;
  p.call("variant_mark", {*out}, {});
  ASSERT_TRUE(d->dispatch(p));
  std::vector<double> host(100);
  ASSERT_TRUE(d->download(*out, std::span<double>(host)));
  EXPECT_EQ(host[0], 2.0);
}

TEST(GridSyncShapes, ShapeOfAProgram) {
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto a = d->allocate<double>(8), b = d->allocate<double>(8), r = d->allocate<double>(1);
  ASSERT_TRUE(a && b && r);
  roster::program p;
  p.triad(*a, *b, *a, 2.0).grid_sync().dot(*r, *a, *b);
  EXPECT_EQ(roster::program_shape(p.steps()), "triad|dot");
  EXPECT_TRUE(roster::has_shape(p.steps(), "triad|dot"));
  EXPECT_FALSE(roster::has_shape(p.steps(), "triad|do"));
  EXPECT_FALSE(roster::has_shape(p.steps(), "triad|dot|"));
  EXPECT_FALSE(roster::has_shape(p.steps(), "triad,dot"));
  roster::program q;
  q.copy(*a, *b).mul(*b, *a, 2.0).grid_sync().grid_sync();
  q.call("variant_mark", {*a}, {});
  EXPECT_EQ(roster::program_shape(q.steps()), "copy,mul||variant_mark");
  EXPECT_TRUE(roster::has_shape(q.steps(), "copy,mul||variant_mark"));
}

TEST(GridSyncShapes, RoundTripAndAnOldRecordIsTheTriadDotShape) {
  roster::tuning_file f;
  roster::tuning_record r;
  r.backend = "cpu";
  r.device = "cpu/host";
  r.sync_shapes = {{"copy|dot", 1000.0, 800.0, 0.01}, {"triad|dot", 1000.0, 990.0, 0.01}};
  f.records.push_back(r);
  auto back = roster::parse_tuning(roster::to_json(f));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->records[0], r);
  EXPECT_EQ(r.split_faster_for("copy|dot"), true);
  EXPECT_EQ(r.split_faster_for("triad|dot"), false);  // 1% within the 3% minimum
  EXPECT_EQ(r.split_faster_for("add|dot"), std::nullopt);
}

// A record for the CPU adapter whose split wins for one shape only.
void record_split_shape(const std::string& path, std::string shape) {
  auto d = open_cpu(roster::acquire_options{.wrap = false});
  ASSERT_TRUE(d);
  roster::tuning_record r;
  r.backend = d->adapter().backend;
  r.device = roster::tuning_device_key(d->adapter());
  r.driver_version = d->adapter().driver_version;
  r.sync_shapes = {{std::move(shape), 2000.0, 1000.0, 0.01}};
  ASSERT_TRUE(roster::save_tuning(path, std::span(&r, 1)));
  roster::reload_tuning();
}

TEST(GridSyncShapes, AcquireCutsOnlyTheRecordedShape) {
  tuning_home home;
  auto plain = open_cpu();
  ASSERT_TRUE(plain);
  ASSERT_TRUE(plain->caps().native_grid_sync);
  EXPECT_EQ(dynamic_cast<roster::grid_sync_split<roster::device>*>(plain.get()), nullptr);  // no record: native
  record_split_shape(home.path, "copy|dot");
  auto d = open_cpu();
  ASSERT_TRUE(d);
  auto* cut = dynamic_cast<roster::grid_sync_split<roster::device>*>(d.get());
  ASSERT_NE(cut, nullptr);
  EXPECT_TRUE(d->caps().native_grid_sync);
  auto a = d->allocate<double>(64), b = d->allocate<double>(64), r = d->allocate<double>(1);
  ASSERT_TRUE(a && b && r);
  roster::program measured, other;
  measured.fill(*b, 3.0).copy(*a, *b).grid_sync().dot(*r, *a, *b);
  other.fill(*b, 3.0).triad(*a, *b, *b, 1.0).grid_sync().dot(*r, *a, *b);
  EXPECT_FALSE(cut->cuts(measured.steps()));  // fill,copy|dot is another shape
  roster::program exact;
  exact.copy(*a, *b).grid_sync().dot(*r, *a, *b);
  EXPECT_TRUE(cut->cuts(exact.steps()));
  EXPECT_FALSE(cut->cuts(other.steps()));
  // Both run right, cut or not.
  for (const auto* p : {&measured, &exact, &other}) {
    ASSERT_TRUE(d->dispatch(*p));
    std::vector<double> sum(1);
    ASSERT_TRUE(d->download(*r, std::span<double>(sum)));
    EXPECT_DOUBLE_EQ(sum[0], p == &other ? 64 * 6.0 * 3.0 : 64 * 9.0);
  }
}

TEST(GridSyncShapes, AStaleRecordCutsNothing) {
  tuning_home home;
  auto d = open_cpu(roster::acquire_options{.wrap = false});
  ASSERT_TRUE(d);
  roster::tuning_record r;
  r.backend = d->adapter().backend;
  r.device = roster::tuning_device_key(d->adapter());
  r.driver_version = d->adapter().driver_version + "-old";
  r.sync_shapes = {{"copy|dot", 2000.0, 1000.0, 0.01}};
  ASSERT_TRUE(roster::save_tuning(home.path, std::span(&r, 1)));
  roster::reload_tuning();
  auto again = open_cpu();
  ASSERT_TRUE(again);
  EXPECT_EQ(dynamic_cast<roster::grid_sync_split<roster::device>*>(again.get()), nullptr);
}

// A built-in op's variants: the backend's entry and users' entries, chosen
// among by the same rule as any kernel's.
TEST(BuiltinVariants, TuneKernelRefusesTheWrongUserTriadAndKeepsTheBuiltIn) {
  auto d = open_cpu(roster::acquire_options{.wrap = false});
  ASSERT_TRUE(d);
  auto t = roster::tune_kernel(*d, "triad", roster::element_type::f64, 1u << 16, roster::tune_options{.reps = 5});
  ASSERT_TRUE(t) << t.error().message();
  ASSERT_EQ(t->variants.size(), 3u);
  for (const auto& v : t->variants) {
    EXPECT_EQ(v.is_default, v.variant == "builtin") << v.variant;
    EXPECT_EQ(v.wrong.has_value(), v.variant == "user_wrong") << v.variant;
  }
  ASSERT_EQ(t->refused().size(), 1u);
  EXPECT_NE(t->refused()[0].message().find("variant 'user_wrong' is wrong"), std::string::npos)
      << t->refused()[0].message();
  EXPECT_EQ(t->choice.baseline, "builtin");
  EXPECT_EQ(t->choice.variant, "builtin");  // the slower user variant does not beat it
  EXPECT_EQ(t->choice.op, "triad");
  // The user's loop was timed: it ran (checked run plus timed runs, on each thread).
  EXPECT_GT(user_triad_runs.load(), 0);
}

// Runs a[i] = b[i] + 2 c[i] on 1000 elements through `p_of`; returns a[999]
// and how many times the user's loop ran.
template <class F>
std::pair<double, int> triad_on(roster::device& d, F p_of) {
  auto a = d.allocate<double>(1000), b = d.allocate<double>(1000), c = d.allocate<double>(1000);
  EXPECT_TRUE(a && b && c);
  roster::program fill;
  fill.fill(*b, 1.0).fill(*c, 3.0);
  EXPECT_TRUE(d.dispatch(fill));
  const int before = user_triad_runs.load();
  roster::program p = p_of(*a, *b, *c);
  auto ok = d.dispatch(p);
  EXPECT_TRUE(ok) << ok.error().message();
  std::vector<double> host(1000);
  EXPECT_TRUE(d.download(*a, std::span<double>(host)));
  return {host[999], user_triad_runs.load() - before};
}

TEST(BuiltinVariants, ANamedUserVariantOfTriadRunsTheUsersLoop) {
  auto d = open_cpu(roster::acquire_options{.wrap = false});
  ASSERT_TRUE(d);
  auto named = triad_on(*d, [](auto a, auto b, auto c) {
    roster::program p;
    p.call("triad", {a, b, c}, {2.0}, {.variant = "user_slow"});
    return p;
  });
  EXPECT_EQ(named.first, 7.0);
  EXPECT_GT(named.second, 0);
  auto by_default = triad_on(*d, [](auto a, auto b, auto c) {
    roster::program p;
    p.call("triad", {a, b, c}, {2.0});
    return p;
  });
  EXPECT_EQ(by_default.first, 7.0);
  EXPECT_EQ(by_default.second, 0);  // the default is the built-in entry: the backend's loop
  auto builtin = triad_on(*d, [](auto a, auto b, auto c) {
    roster::program p;
    p.call("triad", {a, b, c}, {2.0}, {.variant = "builtin"});
    return p;
  });
  EXPECT_EQ(builtin.first, 7.0);
  EXPECT_EQ(builtin.second, 0);
}

TEST(BuiltinVariants, ARecordedUserVariantOfTriadRunsForCallsThatNameNone) {
  tuning_home home;
  auto probe = open_cpu();
  ASSERT_TRUE(probe);
  auto c = choice("triad", roster::size_class(1000), "user_slow");
  c.baseline = "builtin";
  ASSERT_TRUE(roster::record_kernel_choices(probe->adapter(), std::span(&c, 1), home.path));
  auto d = open_cpu();  // acquire gives it the recorded choices
  ASSERT_TRUE(d);
  auto by_record = triad_on(*d, [](auto a, auto b, auto c) {
    roster::program p;
    p.call("triad", {a, b, c}, {2.0});
    return p;
  });
  EXPECT_EQ(by_record.first, 7.0);
  EXPECT_GT(by_record.second, 0);
  auto named = triad_on(*d, [](auto a, auto b, auto c) {
    roster::program p;
    p.call("triad", {a, b, c}, {2.0}, {.variant = "builtin"});
    return p;
  });
  EXPECT_EQ(named.first, 7.0);
  EXPECT_EQ(named.second, 0);
}

}  // namespace
