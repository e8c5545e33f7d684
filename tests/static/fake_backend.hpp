#pragma once
// Small backends for the static registry's tests: host memory, every STREAM
// op, and counters that show how the device was called.

#include <roster/backend.hpp>
#include <roster/static_registry.hpp>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

namespace roster_test {

/// A host-memory device; counts dispatch_steps calls (pieces run).
class fake_device final : public roster::device {
 public:
  fake_device(std::string_view id, bool native) : native_(native) {
    info_.backend = std::string(id);
    info_.name = "fake " + info_.backend;
    info_.type = roster::device_type::cpu;
    info_.native_grid_sync = native;
  }
  [[nodiscard]] const roster::adapter_info& adapter() const noexcept override { return info_; }
  [[nodiscard]] roster::device_caps caps() const noexcept override { return {native_, true, ops_}; }
  [[nodiscard]] roster::expected<void> synchronize() override { return {}; }
  [[nodiscard]] roster::expected<void> dispatch_steps(std::span<const roster::step> steps) override {
    ++pieces;
    for (const auto& s : steps) run(s);
    return {};
  }
  /// Removes an op from the device's caps.
  void drop(roster::op o) { ops_.bits &= ~(1u << static_cast<unsigned>(o)); }

  int pieces = 0;

 protected:
  // Lets static dispatch call owns() on the final type, so that call is direct too.
  friend struct roster::detail::static_access;

  roster::expected<std::uint32_t> do_allocate(roster::element_type, std::size_t n) override {
    slots_.push_back(std::make_unique<std::vector<double>>(n));
    return static_cast<std::uint32_t>(slots_.size() - 1);
  }
  roster::expected<void> do_release(std::uint32_t slot) override {
    slots_[slot].reset();
    return {};
  }
  bool owns(const roster::buffer& b) const noexcept override {
    return b.slot < slots_.size() && slots_[b.slot] && slots_[b.slot]->size() == b.size;
  }
  roster::expected<void> do_upload(const roster::buffer& b, const void* src) override {
    for (std::size_t i = 0; i < b.size; ++i) (*slots_[b.slot])[i] = static_cast<const double*>(src)[i];
    return {};
  }
  roster::expected<void> do_download(const roster::buffer& b, void* dst) override {
    for (std::size_t i = 0; i < b.size; ++i) static_cast<double*>(dst)[i] = (*slots_[b.slot])[i];
    return {};
  }

 private:
  std::vector<double>& at(const roster::buffer& b) { return *slots_[b.slot]; }
  void run(const roster::step& s) {
    using roster::op;
    if (s.op == op::grid_sync) return;
    auto& o = at(s.out);
    const std::size_t n = o.size();
    for (std::size_t i = 0; i < n; ++i) {
      switch (s.op) {
        case op::fill: o[i] = s.scalar; break;
        case op::copy: o[i] = at(s.in1)[i]; break;
        case op::mul: o[i] = s.scalar * at(s.in1)[i]; break;
        case op::add: o[i] = at(s.in1)[i] + at(s.in2)[i]; break;
        case op::triad: o[i] = at(s.in1)[i] + s.scalar * at(s.in2)[i]; break;
        case op::nstream: o[i] += at(s.in1)[i] + s.scalar * at(s.in2)[i]; break;
        default: break;
      }
    }
    if (s.op == op::dot) {
      double sum = 0;
      for (std::size_t i = 0; i < at(s.in1).size(); ++i) sum += at(s.in1)[i] * at(s.in2)[i];
      for (auto& x : o) x = sum;
    }
  }

  roster::adapter_info info_;
  bool native_;
  roster::op_set ops_ = roster::op_set::all();
  std::vector<std::unique_ptr<std::vector<double>>> slots_;
};

/// A backend over fake_device with a chosen id and rank.
template <roster::fixed_string Id, int Rank, bool Native = false, bool Dispatches = true>
struct fake_backend {
  static constexpr std::string_view id = Id.view();
  static constexpr int rank = Rank;
  static constexpr bool dispatches = Dispatches;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = fake_device;
  static roster::expected<std::unique_ptr<fake_device>> open(roster::open_key, std::uint32_t ordinal) {
    if (ordinal != 0)
      return roster::make_error(roster::errc::not_found, std::string(id) + ": no adapter " + std::to_string(ordinal),
                                "use ordinal 0");
    return std::make_unique<fake_device>(id, Native);
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() {
    roster::adapter_info a;
    a.backend = std::string(id);
    return std::vector<roster::adapter_info>{a};
  }
};

/// A backend whose factory throws.
struct throwing_backend {
  static constexpr std::string_view id = "throws";
  static constexpr int rank = 50;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = fake_device;
  static roster::expected<std::unique_ptr<fake_device>> open(roster::open_key, std::uint32_t) { throw std::runtime_error("boom"); }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() { return std::vector<roster::adapter_info>{}; }
};

}  // namespace roster_test
