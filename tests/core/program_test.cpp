// The program builder, validation of every malformed program, and the
// device front end's argument checks; every error ends with its Fix: part.
#include <roster/backends/cpu.hpp>
#include <roster/roster.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using roster::buffer;
using roster::element_type;
using roster::errc;
using roster::op;
using roster::program;

void expect_fix(const roster::error& e) {
  EXPECT_NE(e.message().find("\nFix: "), std::string::npos) << e.message();
  EXPECT_FALSE(e.fix().empty()) << e.message();
  EXPECT_FALSE(e.what().empty()) << e.message();
}

// Expects validation to fail with invalid_argument and a message holding `words`.
void expect_invalid(const program& p, std::string_view words) {
  auto ok = roster::validate(p);
  ASSERT_FALSE(ok) << "expected: " << words;
  EXPECT_EQ(ok.error().code(), errc::invalid_argument);
  EXPECT_NE(ok.error().message().find(words), std::string::npos) << ok.error().message();
  expect_fix(ok.error());
}

struct fixture : ::testing::Test {
  void SetUp() override {
    auto d = roster::acquire("cpu", {.force_split = false});
    ASSERT_TRUE(d) << d.error().message();
    dev = std::move(*d);
    a = *dev->allocate<double>(100);
    b = *dev->allocate<double>(100);
    c = *dev->allocate<double>(100);
    r = *dev->allocate<double>(1);
    fa = *dev->allocate<float>(100);
  }
  std::unique_ptr<roster::device> dev;
  buffer a, b, c, r, fa;
};

TEST_F(fixture, builder_appends_steps_in_order) {
  program p;
  p.fill(a, 1).copy(c, a).mul(b, c, 2).add(c, a, b).triad(a, b, c, 3).nstream(a, b, c, 4).dot(r, a, b).grid_sync();
  ASSERT_EQ(p.steps().size(), 8u);
  const op want[] = {op::fill, op::copy, op::mul, op::add, op::triad, op::nstream, op::dot, op::grid_sync};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(p.steps()[i].op, want[i]);
  EXPECT_EQ(p.steps()[4].out, a);
  EXPECT_EQ(p.steps()[4].in1, b);
  EXPECT_EQ(p.steps()[4].in2, c);
  EXPECT_EQ(p.steps()[4].scalar, 3.0);
  EXPECT_EQ(p.ops(), roster::op_set::all());
  EXPECT_EQ(p.type(), element_type::f64);
  EXPECT_FALSE(p.empty());
  EXPECT_TRUE(roster::validate(p));
  program pf;
  pf.fill(fa, 1);
  EXPECT_EQ(pf.type(), element_type::f32);
}

TEST_F(fixture, bytes_moved_counts_as_babelstream) {
  program p;
  p.copy(c, a).mul(b, c, 2).add(c, a, b).triad(a, b, c, 3).dot(r, a, b).nstream(a, b, c, 1).fill(a, 0);
  const std::size_t want[] = {1600, 1600, 2400, 2400, 1600, 3200, 800};
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(roster::bytes_moved(p.steps()[i]), want[i]) << i;
}

TEST_F(fixture, rejects_empty_program) { expect_invalid(program{}, "no steps"); }

TEST_F(fixture, rejects_program_of_only_grid_syncs) {
  program p;
  p.grid_sync().grid_sync();
  expect_invalid(p, "only grid_sync");
}

TEST_F(fixture, rejects_oversized_program) {
  program p;
  for (std::size_t i = 0; i <= roster::max_program_steps; ++i) p.fill(a, 1);
  expect_invalid(p, "more than the limit");
  program fits;
  for (std::size_t i = 0; i < roster::max_program_steps; ++i) fits.fill(a, 1);
  EXPECT_TRUE(roster::validate(fits));
}

TEST_F(fixture, rejects_never_allocated_buffer) {
  program p;
  p.copy(a, buffer{});
  expect_invalid(p, "never allocated");
}

TEST_F(fixture, rejects_buffers_of_two_devices_in_one_step) {
  auto other = roster::acquire("cpu");
  ASSERT_TRUE(other);
  auto x = *(*other)->allocate<double>(100);
  program p;
  p.add(c, a, x);
  expect_invalid(p, "different devices");
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  expect_fix(ok.error());
}

TEST_F(fixture, dispatch_rejects_buffer_from_another_device) {
  auto other = roster::acquire("cpu");
  ASSERT_TRUE(other);
  auto x = *(*other)->allocate<double>(100);
  program p;
  p.fill(a, 1).fill(x, 2);  // each step is consistent; the second is not this device's
  EXPECT_TRUE(roster::validate(p));
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().code(), errc::invalid_argument);
  EXPECT_NE(ok.error().message().find("another device"), std::string::npos) << ok.error().message();
  expect_fix(ok.error());
  auto timed = dev->timed_dispatch(p);
  ASSERT_FALSE(timed);
  expect_fix(timed.error());
}

TEST_F(fixture, dispatch_rejects_released_buffer) {
  auto x = *dev->allocate<double>(100);
  ASSERT_TRUE(dev->release(x));
  program p;
  p.fill(x, 1);
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().message().find("not live"), std::string::npos) << ok.error().message();
  expect_fix(ok.error());
  // A second release, and a new buffer of the same shape, do not revive the handle.
  auto again = dev->release(x);
  ASSERT_FALSE(again);
  expect_fix(again.error());
  auto y = *dev->allocate<double>(100);
  EXPECT_NE(y.slot, x.slot);
  EXPECT_FALSE(dev->dispatch(p));
}

TEST_F(fixture, dispatch_rejects_altered_handle) {
  buffer forged = a;
  forged.size = 50;
  program p;
  p.fill(forged, 1);
  auto ok = dev->dispatch(p);
  ASSERT_FALSE(ok);
  expect_fix(ok.error());
}

TEST_F(fixture, rejects_mixed_types) {
  program within;
  within.copy(a, fa);  // the signature check of the op's inventory entry refuses it, as for a user kernel
  expect_invalid(within, "parameter 1 (read double buffer): a float buffer was passed");
  program across;
  across.fill(a, 1).fill(fa, 1);
  expect_invalid(across, "mixes float and double");
}

TEST_F(fixture, rejects_lengths_that_disagree) {
  auto shorter = *dev->allocate<double>(99);
  program copy, add, triad, nstream, dot;
  // The errors of a user kernel's call: the op's signature from the inventory.
  copy.copy(shorter, a);
  expect_invalid(copy, "call of 'copy': parameter 1 (read double buffer): its length 100 disagrees with parameter 0's 99");
  add.add(c, a, shorter);
  expect_invalid(add, "call of 'add': parameter 2 (read double buffer): its length 99 disagrees");
  triad.triad(a, shorter, c, 1);
  expect_invalid(triad, "call of 'triad': parameter 1 (read double buffer): its length 99 disagrees");
  nstream.nstream(a, b, shorter, 1);
  expect_invalid(nstream, "call of 'nstream': parameter 2 (read double buffer): its length 99 disagrees");
  dot.dot(r, a, shorter);
  expect_invalid(dot, "call of 'dot': parameter 2 (read double buffer): its length 99 disagrees with parameter 1's");
  // Steps of different lengths in one program are fine.
  program mixed;
  mixed.fill(a, 1).fill(shorter, 2);
  EXPECT_TRUE(roster::validate(mixed));
}

TEST_F(fixture, rejects_empty_dot_result) {
  buffer empty_r = r;
  empty_r.size = 0;
  program p;
  p.dot(empty_r, a, b);
  expect_invalid(p, "call of 'dot': parameter 0 (write double buffer): the buffer is empty");
}

TEST_F(fixture, rejects_non_finite_scalars) {
  const double bad[] = {std::nan(""), std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity()};
  for (double s : bad) {
    program fill, mul, triad, nstream;
    fill.fill(a, s);
    expect_invalid(fill, "not finite");
    mul.mul(b, c, s);
    expect_invalid(mul, "not finite");
    triad.triad(a, b, c, s);
    expect_invalid(triad, "not finite");
    nstream.nstream(a, b, c, s);
    expect_invalid(nstream, "not finite");
  }
  program too_big_for_float;
  too_big_for_float.fill(fa, 1e39);
  expect_invalid(too_big_for_float, "does not fit in a float");
  program fine_in_double;
  fine_in_double.fill(a, 1e300);
  EXPECT_TRUE(roster::validate(fine_in_double));
}

// validate(program) remembers a valid program; a step added later is checked.
TEST_F(fixture, a_valid_program_that_gains_a_bad_step_is_refused) {
  auto shorter = *dev->allocate<double>(99);
  program p;
  p.fill(a, 1.0);
  ASSERT_TRUE(roster::validate(p));
  ASSERT_TRUE(roster::validate(p));  // remembered
  program copy = p;
  p.copy(shorter, a);
  expect_invalid(p, "call of 'copy': parameter 1 (read double buffer): its length 100 disagrees");
  EXPECT_TRUE(roster::validate(copy));  // the copy kept its own steps
  copy.triad(a, shorter, b, 1.0);
  expect_invalid(copy, "call of 'triad'");
  EXPECT_TRUE(dev->dispatch(p).error().message().find("disagrees") != std::string::npos);
}

TEST_F(fixture, rejects_unknown_op) {
  program p;
  roster::step s{static_cast<op>(99), a, {}, {}, 0.0};
  p.push(s);
  expect_invalid(p, "unknown op");
}

TEST_F(fixture, dispatch_prefixes_validation_errors_with_the_device) {
  auto ok = dev->dispatch(program{});
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message().rfind("cpu:0: ", 0), 0u) << ok.error().message();
  expect_fix(ok.error());
}

TEST_F(fixture, allocate_rejects_zero_and_oversized) {
  auto zero = dev->allocate<double>(0);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code(), errc::invalid_argument);
  expect_fix(zero.error());
  auto huge = dev->allocate<float>(std::size_t{1} << 41);
  ASSERT_FALSE(huge);
  expect_fix(huge.error());
  auto bad_type = dev->allocate(static_cast<element_type>(7), 4);
  ASSERT_FALSE(bad_type);
  expect_fix(bad_type.error());
}

TEST_F(fixture, upload_and_download_reject_wrong_size_and_type) {
  std::vector<double> d99(99), d100(100), d101(101);
  std::vector<float> f100(100);
  for (auto res : {dev->upload(a, std::span<const double>(d99)), dev->upload(a, std::span<const double>(d101)),
                   dev->upload(a, std::span<const float>(f100)), dev->download(a, std::span<double>(d99)),
                   dev->download(a, std::span<double>(d101)), dev->download(a, std::span<float>(f100)),
                   dev->upload(buffer{}, std::span<const double>(d100)),
                   dev->download(buffer{}, std::span<double>(d100))}) {
    ASSERT_FALSE(res);
    EXPECT_EQ(res.error().code(), errc::invalid_argument);
    expect_fix(res.error());
  }
  EXPECT_TRUE(dev->upload(a, std::span<const double>(d100)));
  EXPECT_TRUE(dev->download(a, std::span<double>(d100)));
}

TEST(errors, error_keeps_fix_last_through_prepend) {
  roster::error e(errc::io, "could not read", "check the path");
  e.prepend("tuning");
  EXPECT_EQ(e.message(), "tuning: could not read\nFix: check the path");
  EXPECT_EQ(e.what(), "tuning: could not read");
  EXPECT_EQ(e.fix(), "check the path");
  EXPECT_EQ(roster::to_string(errc::internal), "internal");
}

TEST(errors, expected_holds_value_or_error) {
  roster::expected<int> v = 3;
  EXPECT_TRUE(v);
  EXPECT_EQ(*v, 3);
  roster::expected<int> e = roster::make_error(errc::unsupported, "no", "yes");
  EXPECT_FALSE(e);
  EXPECT_EQ(e.value_or(7), 7);
  EXPECT_EQ(e.error().code(), errc::unsupported);
}

}  // namespace
