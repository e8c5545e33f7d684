// One test body per op and element type, run on every adapter of every
// registered backend that dispatches here (CUDA and Vulkan join when they are
// linked), once with the device's native grid sync and once through the
// grid-sync split. Checked against a double-precision reference on fresh
// random data; the seed is printed (set ROSTER_TEST_SEED to repeat a run).
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using roster::buffer;
using roster::op;
using roster::program;

// One adapter under one wrapping: "cpu:0" native or split.
struct target {
  std::string spec;
  bool split = false;
  std::string skip;  // why it cannot run here (empty: it runs)
};

void PrintTo(const target& t, std::ostream* os) { *os << t.spec << (t.split ? " (split)" : " (native)"); }

std::string name_of(const ::testing::TestParamInfo<target>& info) {
  std::string n;
  for (char ch : info.param.spec) n += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return n + (info.param.split ? "_split" : "_native");
}

// Every adapter of every registered backend that dispatches on this host. A
// backend with no usable adapter still yields one target, skipped with its reason.
std::vector<target> targets() {
  std::vector<target> out;
  for (const auto& b : roster::registered_backends()) {
    if (!b.dispatches) continue;
    const std::string id(b.id());
    auto adapters = roster::enumerate_adapters(*b.registration);
    if (!adapters || adapters->empty()) {
      const std::string why = adapters ? id + " lists no adapter on this host" : adapters.error().message();
      out.push_back({id + ":0", false, why});
      continue;
    }
    for (const auto& a : *adapters)
      for (bool split : {false, true}) out.push_back({a.spec(), split, {}});
  }
  return out;
}

std::uint64_t seed() {
  static const std::uint64_t s = [] {
    std::uint64_t v = std::random_device{}();
    v = (v << 32) ^ std::random_device{}();
    if (const char* env = std::getenv("ROSTER_TEST_SEED")) v = std::strtoull(env, nullptr, 10);
    std::cout << "[ seed     ] ROSTER_TEST_SEED=" << v << "\n";
    return v;
  }();
  return s;
}

// Devices stay open for the whole run, one per target, and close before
// exit (not in static destruction, after a GPU driver may have torn down).
std::map<std::string, std::unique_ptr<roster::device>>& device_cache() {
  static std::map<std::string, std::unique_ptr<roster::device>> cache;
  return cache;
}
struct close_devices : ::testing::Environment {
  void TearDown() override { device_cache().clear(); }
};
[[maybe_unused]] ::testing::Environment* const close_devices_at_end =
    ::testing::AddGlobalTestEnvironment(new close_devices);

roster::device* open(const target& t, std::string& why) {
  auto& cache = device_cache();
  const std::string key = t.spec + (t.split ? "/split" : "/native");
  if (auto it = cache.find(key); it != cache.end()) return it->second.get();
  auto d = roster::acquire(t.spec, {.force_split = t.split});
  if (!d) {
    why = d.error().message();
    return nullptr;
  }
  return cache.emplace(key, std::move(*d)).first->second.get();
}

class backend_ops : public ::testing::TestWithParam<target> {
 protected:
  void SetUp() override {
    (void)seed();
    if (!GetParam().skip.empty()) GTEST_SKIP() << GetParam().spec << " cannot run here: " << GetParam().skip;
    std::string why;
    dev = open(GetParam(), why);
    if (dev == nullptr) GTEST_SKIP() << GetParam().spec << " does not open here: " << why;
    EXPECT_EQ(dev->caps().native_grid_sync && GetParam().split, false);
  }
  // Skips double tests on an adapter without double support.
  template <class T>
  bool supports() {
    if constexpr (std::is_same_v<T, double>)
      if (!dev->caps().f64) return false;
    return true;
  }
  roster::device* dev = nullptr;
};

// Sizes: tiny, around block and warp edges, and large and odd.
const std::size_t sizes[] = {1, 2, 3, 31, 33, 1000, 2047, 2049, 4099, (1u << 16) + 7};

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

template <class T>
constexpr double tolerance() {
  return std::is_same_v<T, float> ? 1e-6 : 1e-15;
}

template <class T>
std::vector<T> fetch(roster::device& d, const buffer& b) {
  std::vector<T> v(b.size);
  auto ok = d.download(b, std::span<T>(v));
  EXPECT_TRUE(ok) << (ok ? "" : ok.error().message());
  return v;
}

template <class T>
void put(roster::device& d, const buffer& b, const std::vector<T>& v) {
  auto ok = d.upload(b, std::span<const T>(v));
  ASSERT_TRUE(ok) << ok.error().message();
}

// Runs one op on random inputs of every size and checks each element against
// the reference computed in double; inputs must come back unchanged.
template <class T>
void check_op(roster::device& d, op o) {
  std::mt19937_64 rng(seed() ^ (static_cast<std::uint64_t>(o) << 40) ^ sizeof(T));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t n : sizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto a = d.allocate<T>(n), b = d.allocate<T>(n), c = d.allocate<T>(n), r = d.allocate<T>(1);
    ASSERT_TRUE(a && b && c && r);
    auto ha = random_values<T>(n, rng), hb = random_values<T>(n, rng), hc = random_values<T>(n, rng);
    const double s = std::uniform_real_distribution<double>(0.25, 4.0)(rng);
    const T st = static_cast<T>(s);
    put(d, *a, ha);
    put(d, *b, hb);
    put(d, *c, hc);
    put(d, *r, std::vector<T>{nan});
    // Poison the output (nstream reads it, so it keeps its data).
    program p;
    std::vector<T> hout;
    const buffer* out = nullptr;
    switch (o) {
      case op::fill: out = &*a; p.fill(*a, s); break;
      case op::copy: out = &*c; p.copy(*c, *a); break;
      case op::mul: out = &*b; p.mul(*b, *c, s); break;
      case op::add: out = &*c; p.add(*c, *a, *b); break;
      case op::triad: out = &*a; p.triad(*a, *b, *c, s); break;
      case op::nstream: out = &*a; p.nstream(*a, *b, *c, s); break;
      case op::dot: out = &*r; p.dot(*r, *a, *b); break;
      case op::grid_sync: case op::call: FAIL();
    }
    if (o != op::nstream && o != op::dot) put(d, *out, std::vector<T>(n, nan));
    auto ok = d.dispatch(p);
    ASSERT_TRUE(ok) << ok.error().message();
    ASSERT_TRUE(d.synchronize());
    const auto ga = fetch<T>(d, *a), gb = fetch<T>(d, *b), gc = fetch<T>(d, *c), gr = fetch<T>(d, *r);
    // got[i] must be within tol * (sum of the magnitudes of the terms) of the reference.
    auto expect_near = [&](const std::vector<T>& got, auto reference, auto magnitude, const char* what) {
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n && bad < 5; ++i) {
        const double ref = reference(i), g = static_cast<double>(got[i]);
        const double tol = tolerance<T>() * magnitude(i) + std::numeric_limits<double>::min();
        if (!(std::fabs(g - ref) <= tol)) {
          ++bad;
          ADD_FAILURE() << what << "[" << i << "] = " << g << ", want " << ref << " (tolerance " << tol << ")";
        }
      }
    };
    auto same = [&](const std::vector<T>& got, const std::vector<T>& want, const char* what) {
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n && bad < 5; ++i)
        if (!(got[i] == want[i])) {
          ++bad;
          ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", want " << want[i];
        }
    };
    auto A = [&](std::size_t i) { return static_cast<double>(ha[i]); };
    auto B = [&](std::size_t i) { return static_cast<double>(hb[i]); };
    auto C = [&](std::size_t i) { return static_cast<double>(hc[i]); };
    const double sd = static_cast<double>(st);
    switch (o) {
      case op::fill:
        same(ga, std::vector<T>(n, st), "a");
        break;
      case op::copy:
        same(gc, ha, "c");
        break;
      case op::mul:
        expect_near(gb, [&](std::size_t i) { return sd * C(i); }, [&](std::size_t i) { return std::fabs(sd * C(i)); },
                    "b");
        break;
      case op::add:
        expect_near(gc, [&](std::size_t i) { return A(i) + B(i); },
                    [&](std::size_t i) { return std::fabs(A(i)) + std::fabs(B(i)); }, "c");
        break;
      case op::triad:
        expect_near(ga, [&](std::size_t i) { return B(i) + sd * C(i); },
                    [&](std::size_t i) { return std::fabs(B(i)) + std::fabs(sd * C(i)); }, "a");
        break;
      case op::nstream:
        expect_near(ga, [&](std::size_t i) { return A(i) + B(i) + sd * C(i); },
                    [&](std::size_t i) { return 2 * (std::fabs(A(i)) + std::fabs(B(i)) + std::fabs(sd * C(i))); },
                    "a");
        break;
      case op::dot: {
        // Reference in long double; the bound every backend must meet is the
        // one of plain summation in T: |err| <= n * eps(T) * sum |a_i b_i|.
        long double ref = 0, mag = 0;
        for (std::size_t i = 0; i < n; ++i) {
          ref += static_cast<long double>(ha[i]) * hb[i];
          mag += std::fabs(static_cast<long double>(ha[i]) * hb[i]);
        }
        const double eps = std::numeric_limits<T>::epsilon() / 2;
        const double bound = static_cast<double>(n) * eps * static_cast<double>(mag) +
                             eps * std::fabs(static_cast<double>(ref)) + std::numeric_limits<double>::min();
        EXPECT_LE(std::fabs(static_cast<double>(gr[0]) - static_cast<double>(ref)), bound)
            << "dot = " << gr[0] << ", want " << static_cast<double>(ref);
        break;
      }
      case op::grid_sync: case op::call: break;
    }
    // Inputs are untouched.
    if (o != op::fill && o != op::triad && o != op::nstream) same(ga, ha, "input a");
    if (o != op::mul) same(gb, hb, "input b");
    if (o != op::copy && o != op::add) same(gc, hc, "input c");
    for (const auto& x : {*a, *b, *c, *r}) ASSERT_TRUE(d.release(x));
  }
}

#define ROSTER_TEST_OP(name)                                 \
  TEST_P(backend_ops, name##_float) { check_op<float>(*dev, op::name); } \
  TEST_P(backend_ops, name##_double) {                       \
    if (!supports<double>()) GTEST_SKIP() << GetParam().spec << " has no double support"; \
    check_op<double>(*dev, op::name);                        \
  }
ROSTER_TEST_OP(fill)
ROSTER_TEST_OP(copy)
ROSTER_TEST_OP(mul)
ROSTER_TEST_OP(add)
ROSTER_TEST_OP(triad)
ROSTER_TEST_OP(nstream)
ROSTER_TEST_OP(dot)
#undef ROSTER_TEST_OP

TEST_P(backend_ops, allocating_zero_elements_is_an_error) {
  auto z = dev->allocate<float>(0);
  ASSERT_FALSE(z);
  EXPECT_EQ(z.error().code(), roster::errc::invalid_argument);
  EXPECT_FALSE(z.error().fix().empty());
}

// BabelStream's own check: copy, mul, add, triad, dot for ntimes iterations
// from a = 0.1, b = 0.2, c = 0.0, scalar = 0.4, compared with the values the
// recurrence predicts (BabelStream's check_solution and its tolerances).
template <class T>
void babelstream_check(roster::device& d, bool one_program) {
  const std::size_t n = (std::size_t{1} << 18) + 3;
  const int ntimes = 100;
  const T start_a = T(0.1), start_b = T(0.2), start_c = T(0.0), scalar = T(0.4);
  auto a = *d.allocate<T>(n), b = *d.allocate<T>(n), c = *d.allocate<T>(n), r = *d.allocate<T>(1);
  program init;
  init.fill(a, start_a).fill(b, start_b).fill(c, start_c);
  ASSERT_TRUE(d.dispatch(init));
  program iteration;
  iteration.copy(c, a).grid_sync().mul(b, c, scalar).grid_sync().add(c, a, b).grid_sync().triad(a, b, c, scalar)
      .grid_sync().dot(r, a, b);
  std::vector<program> kernels(5);
  kernels[0].copy(c, a);
  kernels[1].mul(b, c, scalar);
  kernels[2].add(c, a, b);
  kernels[3].triad(a, b, c, scalar);
  kernels[4].dot(r, a, b);
  for (int k = 0; k < ntimes; ++k) {
    if (one_program) {
      auto ok = d.dispatch(iteration);
      ASSERT_TRUE(ok) << ok.error().message();
    } else {
      for (const auto& kp : kernels) {
        auto ok = d.dispatch(kp);
        ASSERT_TRUE(ok) << ok.error().message();
      }
    }
  }
  ASSERT_TRUE(d.synchronize());
  T gold_a = start_a, gold_b = start_b, gold_c = start_c;
  for (int k = 0; k < ntimes; ++k) {
    gold_c = gold_a;
    gold_b = scalar * gold_c;
    gold_c = gold_a + gold_b;
    gold_a = gold_b + scalar * gold_c;
  }
  const T gold_sum = gold_a * gold_b * static_cast<T>(n);
  auto avg_err = [&](const std::vector<T>& v, T gold) {
    double e = 0;
    for (T x : v) e += std::fabs(static_cast<double>(x) - static_cast<double>(gold));
    return e / static_cast<double>(v.size());
  };
  const double epsi = std::numeric_limits<T>::epsilon() * 100.0;
  EXPECT_LE(avg_err(fetch<T>(d, a), gold_a), epsi);
  EXPECT_LE(avg_err(fetch<T>(d, b), gold_b), epsi);
  EXPECT_LE(avg_err(fetch<T>(d, c), gold_c), epsi);
  const double sum = static_cast<double>(fetch<T>(d, r)[0]);
  const double err_sum = std::fabs((sum - static_cast<double>(gold_sum)) / static_cast<double>(gold_sum));
  EXPECT_LE(err_sum, (std::is_same_v<T, float> ? epsi : 1.0e-8)) << "sum " << sum << ", gold " << gold_sum;
  for (const auto& x : {a, b, c, r}) ASSERT_TRUE(d.release(x));
}

TEST_P(backend_ops, babelstream_check_float) {
  babelstream_check<float>(*dev, false);
  babelstream_check<float>(*dev, true);
}
TEST_P(backend_ops, babelstream_check_double) {
  if (!supports<double>()) GTEST_SKIP() << GetParam().spec << " has no double support";
  babelstream_check<double>(*dev, false);
  babelstream_check<double>(*dev, true);
}

// Element-wise steps with no grid_sync between them (a backend may fuse them)
// give element i the same value as running them one by one, and a dot after
// them sees their results; steps of different lengths share a segment.
template <class T>
void fused_chain(roster::device& d) {
  std::mt19937_64 rng(seed() + 17);
  for (std::size_t n : {std::size_t{5}, std::size_t{2049}, (std::size_t{1} << 16) + 7}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    auto a = *d.allocate<T>(n), b = *d.allocate<T>(n), c = *d.allocate<T>(n), r = *d.allocate<T>(1);
    auto shorter = *d.allocate<T>(n / 2 + 1);
    auto ha = random_values<T>(n, rng), hb = random_values<T>(n, rng), hc = random_values<T>(n, rng);
    put(d, a, ha);
    put(d, b, hb);
    put(d, c, hc);
    const T s = T(0.5);
    program p;
    p.copy(c, a).mul(b, c, s).add(c, a, b).fill(shorter, 3).triad(a, b, c, s).nstream(a, b, c, s).dot(r, a, b);
    ASSERT_TRUE(d.dispatch(p));
    std::vector<double> ea(n), eb(n), ec(n);
    long double dot = 0, mag = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double av = ha[i], bv, cv;
      cv = av;
      bv = s * cv;
      cv = av + bv;
      av = bv + s * cv;
      av += bv + s * cv;
      ea[i] = av, eb[i] = bv, ec[i] = cv;
    }
    const auto ga = fetch<T>(d, a), gb = fetch<T>(d, b), gc = fetch<T>(d, c), gs = fetch<T>(d, shorter);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_NEAR(ga[i], ea[i], 8 * tolerance<T>() * (std::fabs(ea[i]) + 1)) << i;
      ASSERT_NEAR(gb[i], eb[i], 8 * tolerance<T>() * (std::fabs(eb[i]) + 1)) << i;
      ASSERT_NEAR(gc[i], ec[i], 8 * tolerance<T>() * (std::fabs(ec[i]) + 1)) << i;
      dot += static_cast<long double>(ga[i]) * gb[i];
      mag += std::fabs(static_cast<long double>(ga[i]) * gb[i]);
    }
    for (T x : gs) ASSERT_EQ(x, T(3));
    const double eps = std::numeric_limits<T>::epsilon() / 2;
    EXPECT_NEAR(fetch<T>(d, r)[0], static_cast<double>(dot),
                static_cast<double>(n) * eps * static_cast<double>(mag) + eps * std::fabs(static_cast<double>(dot)));
    for (const auto& x : {a, b, c, r, shorter}) ASSERT_TRUE(d.release(x));
  }
}

TEST_P(backend_ops, fused_chain_float) { fused_chain<float>(*dev); }
TEST_P(backend_ops, fused_chain_double) {
  if (!supports<double>()) GTEST_SKIP() << GetParam().spec << " has no double support";
  fused_chain<double>(*dev);
}

// A grid_sync orders steps that are not element-wise: the dot's result is
// read by the next segment only after it is complete.
TEST_P(backend_ops, grid_sync_orders_a_dot_before_its_use) {
  const std::size_t n = (std::size_t{1} << 16) + 7;
  auto a = *dev->allocate<float>(n), b = *dev->allocate<float>(n), r = *dev->allocate<float>(1),
       r2 = *dev->allocate<float>(1);
  program p;
  p.fill(a, 1).fill(b, 2).grid_sync().dot(r, a, b).grid_sync().copy(r2, r);
  ASSERT_TRUE(dev->dispatch(p));
  EXPECT_EQ(fetch<float>(*dev, r2)[0], 2.0f * static_cast<float>(n));
}

INSTANTIATE_TEST_SUITE_P(registered, backend_ops, ::testing::ValuesIn(targets()), name_of);

}  // namespace
