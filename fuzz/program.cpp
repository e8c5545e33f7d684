// Fuzzes the program builder and validator from bytes: the bytes decode into
// steps over a pool of buffers (of both element types, several lengths, plus
// handles never allocated, released, altered or from another device), with
// any op code and scalar. validate() judges the program; dispatch() must
// agree with it, refuse every bad handle, and, for a valid program, leave the
// CPU backend's buffers equal to a reference computed here in double, within
// a forward error bound. Every refusal carries a Fix: part.
//
// The bound follows the standard model with underflow: each operation gives
// fl(x op y) = (x op y)(1 + d) + e with |d| <= eps and |e| <= tiny. The
// relative part is bounded by eps times the magnitude the result was built
// from (bound[]); the absolute part is carried in units of tiny (under[]) and
// grows with every later multiplication, so a value that underflowed in float
// and was then scaled up by 1e120 is judged by what it really can be. The
// reference uses each scalar as the device does: rounded to the element type.
//
// Layout of an input: byte 0 picks the device (direct, or behind the
// grid-sync split), the element type and the buffer length; byte 1 seeds the
// data (0xff asks for an oversized program); then each step is an op byte,
// one byte per buffer it names and a scalar byte (0xff: eight raw bytes).
#include <roster/roster.hpp>
#include <roster/backends/cpu.hpp>

#include "check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace {

constexpr std::size_t sizes[] = {1, 3, 16, 17, 2049, 4100};
constexpr std::size_t n_sizes = std::size(sizes);
constexpr std::size_t per_size = 3;
constexpr std::size_t max_steps = 48;

// One device with its pool: pool[type][size][k].
struct rig {
  std::unique_ptr<roster::device> dev;
  roster::buffer pool[2][n_sizes][per_size]{};
  roster::buffer released[2]{};
};

rig make_rig(bool split) {
  rig r;
  auto d = roster::acquire("cpu", {.force_split = split});
  ROSTER_FUZZ_CHECK(d.has_value(), "cannot open the CPU device: %s", d ? "" : d.error().message().c_str());
  r.dev = std::move(*d);
  for (int t = 0; t < 2; ++t) {
    const auto type = t == 0 ? roster::element_type::f32 : roster::element_type::f64;
    for (std::size_t s = 0; s < n_sizes; ++s)
      for (std::size_t k = 0; k < per_size; ++k) {
        auto b = r.dev->allocate(type, sizes[s]);
        ROSTER_FUZZ_CHECK(b.has_value(), "allocate failed");
        r.pool[t][s][k] = *b;
      }
    auto gone = r.dev->allocate(type, 16);
    ROSTER_FUZZ_CHECK(gone.has_value() && r.dev->release(*gone).has_value(), "allocate/release failed");
    r.released[t] = *gone;
  }
  return r;
}

struct rigs {
  rig both[2];
};

rigs& the_rigs() {
  static rigs* r = [] {
    setenv("ROSTER_CPU_THREADS", "1", 0);
    auto* x = new rigs;
    x->both[0] = make_rig(false);
    x->both[1] = make_rig(true);
    return x;
  }();
  return *r;
}

struct reader {
  const std::uint8_t* p;
  std::size_t n;
  bool done() const noexcept { return n == 0; }
  std::uint8_t byte() noexcept {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  double raw() noexcept {
    std::uint8_t b[8];
    for (auto& x : b) x = byte();
    double d;
    std::memcpy(&d, b, 8);
    return d;
  }
};

// Where a step's buffer came from: a pool slot (index into the rig's pool) or a bad handle.
struct ref_of {
  int pool = -1;  // t * n_sizes * per_size + s * per_size + k, or -1
  bool bad = false;  // released, altered, or from the other device
};

double scalar_of(reader& in) {
  const std::uint8_t s = in.byte();
  static constexpr double table[] = {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0, 1e30, 1e39,
                                     std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity(), -0.0, 1e-310,
                                     3.4028235677973366e38};
  if (s == 0xff) return in.raw();
  if (s < 64) return table[s % 16];
  return static_cast<double>(s % 9) - 4.0;
}

int pool_index(int tt, std::size_t s, std::size_t k) {
  return static_cast<int>(static_cast<std::size_t>(tt) * n_sizes * per_size + s * per_size + k);
}

// Returns the buffer that byte b names for element type t and length class
// cls, and records in ref where it came from.
roster::buffer decode_buffer(std::uint8_t b, ref_of& ref, const rig& r, const rig& other, int t, std::size_t cls) {
  const int ot = 1 - t;
  if (b < 192) {
    ref.pool = pool_index(t, cls, b % per_size);
    return r.pool[t][cls][b % per_size];
  }
  if (b < 216) {
    const std::size_t s = b % n_sizes, k = (b / n_sizes) % per_size;
    ref.pool = pool_index(t, s, k);
    return r.pool[t][s][k];
  }
  if (b < 232) {
    ref.pool = pool_index(ot, cls, b % per_size);
    return r.pool[ot][cls][b % per_size];
  }
  if (b < 240) return roster::buffer{};
  ref.bad = true;
  if (b < 246) return r.released[t];
  if (b < 250) {
    auto x = r.pool[t][cls][b % per_size];
    ++x.size;
    return x;
  }
  if (b < 253) {
    auto x = r.pool[t][cls][b % per_size];
    x.slot += 1000;
    return x;
  }
  return other.pool[t][cls][b % per_size];
}

// A program decoded from the input, with where each step's buffers came from.
struct decoded {
  roster::program p;
  std::vector<std::array<ref_of, 3>> refs;
  bool any_bad = false;
};

// Decodes steps from the input until it ends or the program holds max_steps.
decoded decode_program(reader& in, const rig& r, const rig& other, int t, std::size_t cls) {
  decoded d;
  while (!in.done() && d.p.steps().size() < max_steps) {
    const std::uint8_t ob = in.byte();
    roster::step s;
    const unsigned code = ob % 9;
    s.op = code < 8 ? static_cast<roster::op>(code) : static_cast<roster::op>(8 + ob / 9);
    const int nb = code < 8 ? roster::buffers_of(s.op) : 3;
    std::array<ref_of, 3> rf{};
    roster::buffer* fields[3] = {&s.out, &s.in1, &s.in2};
    for (int b = 0; b < nb; ++b) {
      *fields[b] = decode_buffer(in.byte(), rf[b], r, other, t, cls);
      if (rf[b].bad) d.any_bad = true;
    }
    s.scalar = scalar_of(in);
    d.p.push(s);
    d.refs.push_back(rf);
  }
  return d;
}

roster::buffer buffer_of(const rig& r, int pool) {
  const int tt = pool / static_cast<int>(n_sizes * per_size);
  const int rest = pool % static_cast<int>(n_sizes * per_size);
  return r.pool[tt][rest / per_size][rest % per_size];
}

// The reference of every pool buffer, indexed like ref_of::pool: its values,
// the magnitude each was built from (bound) and its underflow in units of
// tiny (under). A buffer the program never names stays empty.
struct reference {
  std::vector<std::vector<double>> ref, bound, under;
};

// Uploads the starting data of every pool buffer the program names and
// returns it as the reference.
reference upload_start(rig& r, const std::vector<std::array<ref_of, 3>>& refs, std::uint8_t seed) {
  reference m;
  auto& ref = m.ref;
  auto& bound = m.bound;
  auto& under = m.under;
  ref.resize(2 * n_sizes * per_size);
  bound.resize(ref.size());
  under.resize(ref.size());
  for (const auto& rf : refs)
    for (const auto& x : rf) {
      if (x.pool < 0 || !ref[x.pool].empty()) continue;
      const roster::buffer b = buffer_of(r, x.pool);
      ref[x.pool].resize(b.size);
      bound[x.pool].resize(b.size);
      under[x.pool].assign(b.size, 0.0);
      for (std::size_t i = 0; i < b.size; ++i) {
        ref[x.pool][i] = static_cast<double>(static_cast<int>((seed * 7u + x.pool * 13u + i * 5u) % 17u) - 8);
        bound[x.pool][i] = std::fabs(ref[x.pool][i]);
      }
      bool ok;
      if (b.type == roster::element_type::f32) {
        std::vector<float> host(ref[x.pool].begin(), ref[x.pool].end());
        ok = r.dev->upload<float>(b, host).has_value();
      } else {
        ok = r.dev->upload<double>(b, ref[x.pool]).has_value();
      }
      ROSTER_FUZZ_CHECK(ok, "upload failed");
    }
  return m;
}

// Validates and dispatches p and checks that the two agree; true when p ran
// and its results are to be compared.
bool dispatch_agrees(rig& r, const roster::program& p, bool any_bad) {
  auto valid = roster::validate(p);
  if (!valid) roster_fuzz::check_fix(valid.error());
  auto done = r.dev->dispatch(p);
  if (!done) roster_fuzz::check_fix(done.error());
  ROSTER_FUZZ_CHECK(valid.has_value() || !done.has_value(), "dispatch ran a program validate rejects");
  if (!valid) return false;
  if (any_bad) {
    ROSTER_FUZZ_CHECK(!done.has_value(), "dispatch ran a program with a released, altered or foreign buffer");
    return false;
  }
  ROSTER_FUZZ_CHECK(done.has_value(), "dispatch refused a valid program: %s",
                    done ? "" : done.error().message().c_str());
  return true;
}

// Returns the bounds m with every one past range made infinite.
//
// An input whose bound is past the element type's range may be infinite on
// the device (a float overflows long before the double reference does), and
// 0 * inf is NaN there: such an input makes the result's bound infinite, so
// it is not compared.
std::vector<double> in_range(std::vector<double> m, double range) {
  for (auto& x : m)
    if (!(x <= range)) x = std::numeric_limits<double>::infinity();
  return m;
}

// Applies the dot step s to the reference.
void apply_dot(reference& m, const roster::step& s, const std::array<ref_of, 3>& rf, bool f32, double range) {
  const auto& a = m.ref[rf[1].pool];
  const auto ma = in_range(m.bound[rf[1].pool], range);
  const auto& b = m.ref[rf[2].pool];
  const auto mb = in_range(m.bound[rf[2].pool], range);
  const auto& ua = m.under[rf[1].pool];
  const auto& ub = m.under[rf[2].pool];
  // (a + ea)(b + eb) = ab + a eb + b ea + ea eb, each product and sum adding its own e.
  const double tiny = f32 ? 1e-36 : 1e-300;
  double sum = 0, mm = 0, u = 0;
  for (std::size_t k = 0; k < s.in1.size; ++k) {
    sum += a[k] * b[k];
    mm += ma[k] * mb[k];
    u += ma[k] * ub[k] + mb[k] * ua[k] + tiny * ua[k] * ub[k] + 2;
  }
  m.ref[rf[0].pool][0] = sum;
  m.bound[rf[0].pool][0] = mm;
  m.under[rf[0].pool][0] = u;
}

// Applies the step s, whose buffers came from rf, to the reference.
void apply_step(reference& m, const roster::step& s, const std::array<ref_of, 3>& rf, bool f32, double range) {
  auto& ref = m.ref;
  auto& bound = m.bound;
  auto& under = m.under;
  auto& o = ref[rf[0].pool];
  auto& mo = bound[rf[0].pool];
  auto& uo = under[rf[0].pool];
  // The device computes with the scalar in the element type.
  const double sc = f32 ? static_cast<double>(static_cast<float>(s.scalar)) : s.scalar, as = std::fabs(sc);
  const std::size_t n = s.out.size;
  switch (s.op) {
    case roster::op::fill:
      for (std::size_t k = 0; k < n; ++k) o[k] = sc, mo[k] = as, uo[k] = 0;
      break;
    case roster::op::copy: {
      const auto a = ref[rf[1].pool], ma = in_range(bound[rf[1].pool], range), ua = under[rf[1].pool];
      for (std::size_t k = 0; k < n; ++k) o[k] = a[k], mo[k] = ma[k], uo[k] = ua[k];
      break;
    }
    case roster::op::mul: {
      const auto c = ref[rf[1].pool], mc = in_range(bound[rf[1].pool], range), uc = under[rf[1].pool];
      for (std::size_t k = 0; k < n; ++k) o[k] = sc * c[k], mo[k] = as * mc[k], uo[k] = as * uc[k] + 1;
      break;
    }
    case roster::op::add: {
      const auto a = ref[rf[1].pool], ma = in_range(bound[rf[1].pool], range), ua = under[rf[1].pool];
      const auto b = ref[rf[2].pool], mb = in_range(bound[rf[2].pool], range), ub = under[rf[2].pool];
      for (std::size_t k = 0; k < n; ++k) o[k] = a[k] + b[k], mo[k] = ma[k] + mb[k], uo[k] = ua[k] + ub[k] + 1;
      break;
    }
    case roster::op::triad: {
      const auto b = ref[rf[1].pool], mb = in_range(bound[rf[1].pool], range), ub = under[rf[1].pool];
      const auto c = ref[rf[2].pool], mc = in_range(bound[rf[2].pool], range), uc = under[rf[2].pool];
      for (std::size_t k = 0; k < n; ++k)
        o[k] = b[k] + sc * c[k], mo[k] = mb[k] + as * mc[k], uo[k] = ub[k] + as * uc[k] + 2;
      break;
    }
    case roster::op::nstream: {
      const auto b = ref[rf[1].pool], mb = in_range(bound[rf[1].pool], range), ub = under[rf[1].pool];
      const auto c = ref[rf[2].pool], mc = in_range(bound[rf[2].pool], range), uc = under[rf[2].pool];
      const auto mo_in = in_range(mo, range);
      for (std::size_t k = 0; k < n; ++k) {
        o[k] += b[k] + sc * c[k];
        mo[k] = mo_in[k] + mb[k] + as * mc[k];
        uo[k] = uo[k] + ub[k] + as * uc[k] + 3;
      }
      break;
    }
    case roster::op::dot: apply_dot(m, s, rf, f32, range); break;
    default: break;
  }
}

// Runs the steps of d in order over whole buffers of the reference, and sets
// longest_dot to the longest dot's length; false when the result is not
// defined. A dot's result may be read only after a grid_sync: a program
// touching it sooner has no defined result, so it is only run, not compared.
bool run_reference(reference& m, const decoded& d, std::size_t& longest_dot) {
  const roster::program& p = d.p;
  bool defined = true;
  std::vector<int> dot_outs;  // dot results of the current segment
  const double range = p.type() == roster::element_type::f32 ? 3.4028234663852886e38
                                                             : std::numeric_limits<double>::max();
  const bool f32 = p.type() == roster::element_type::f32;
  longest_dot = 0;
  for (std::size_t i = 0; i < p.steps().size(); ++i) {
    const auto& s = p.steps()[i];
    const auto& rf = d.refs[i];
    if (s.op == roster::op::grid_sync) {
      dot_outs.clear();
      continue;
    }
    const int nb = roster::buffers_of(s.op);
    for (int b = 0; b < nb; ++b)
      for (int o : dot_outs)
        if (rf[b].pool == o) defined = false;
    apply_step(m, s, rf, f32, range);
    if (s.op == roster::op::dot) {
      longest_dot = std::max(longest_dot, s.in1.size);
      dot_outs.push_back(rf[0].pool);
    }
  }
  return defined;
}

// Checks every pool buffer the program names against the reference, within
// the forward error bound.
void compare(rig& r, const reference& m, const roster::program& p, std::size_t longest_dot) {
  const bool f32 = p.type() == roster::element_type::f32;
  const double eps = f32 ? 0x1p-24 : 0x1p-53;
  const double tiny = f32 ? 1e-36 : 1e-300;
  const double chain = 4.0 * static_cast<double>(p.steps().size() + 2) * static_cast<double>(longest_dot + 2);
  for (std::size_t pool = 0; pool < m.ref.size(); ++pool) {
    if (m.ref[pool].empty()) continue;
    const roster::buffer b = buffer_of(r, static_cast<int>(pool));
    std::vector<double> got(b.size);
    if (b.type == roster::element_type::f32) {
      std::vector<float> host(b.size);
      ROSTER_FUZZ_CHECK(r.dev->download<float>(b, host).has_value(), "download failed");
      got.assign(host.begin(), host.end());
    } else {
      ROSTER_FUZZ_CHECK(r.dev->download<double>(b, got).has_value(), "download failed");
    }
    for (std::size_t k = 0; k < b.size; ++k) {
      const double mb = m.bound[pool][k], u = m.under[pool][k];
      if (!std::isfinite(mb) || !std::isfinite(u) || (f32 && mb > 1e37)) continue;
      const double tol = eps * mb * chain + tiny * (u + 1) * chain;
      ROSTER_FUZZ_CHECK(std::fabs(got[k] - m.ref[pool][k]) <= tol,
                        "buffer %zu element %zu: device %.17g, reference %.17g (bound %.3g, underflow %.3g)", pool,
                        k, got[k], m.ref[pool][k], mb, u);
    }
  }
}

// Decodes a program from the input, runs it on r and checks the verdicts
// and, for a valid program, the results against the reference.
void run(reader& in, rig& r, rig& other, int t, std::size_t cls, std::uint8_t seed) {
  const decoded d = decode_program(in, r, other, t, cls);
  if (d.p.empty()) return;
  reference m = upload_start(r, d.refs, seed);
  if (!dispatch_agrees(r, d.p, d.any_bad)) return;
  std::size_t longest_dot = 0;
  if (!run_reference(m, d, longest_dot)) return;
  compare(r, m, d.p, longest_dot);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto& all = the_rigs();
  reader in{data, size};
  const std::uint8_t h = in.byte();
  const std::uint8_t seed = in.byte();
  rig& r = all.both[h & 1];
  rig& other = all.both[1 - (h & 1)];
  const int t = (h >> 1) & 1;
  const std::size_t cls = (h >> 2) % n_sizes;
  if (seed == 0xff) {
    // Oversized: one step more than the limit.
    roster::program p;
    for (std::size_t i = 0; i <= roster::max_program_steps; ++i) p.fill(r.pool[t][cls][0], 1.0);
    auto v = roster::validate(p);
    ROSTER_FUZZ_CHECK(!v.has_value(), "an oversized program passed validation");
    roster_fuzz::check_fix(v.error());
    auto d = r.dev->dispatch(p);
    ROSTER_FUZZ_CHECK(!d.has_value(), "an oversized program ran");
    return 0;
  }
  run(in, r, other, t, cls, seed);
  return 0;
}
