#pragma once
// Test backends for the tools suite: "toolfake" with two discrete adapters on
// host memory (adapter 0 has native grid sync), and "toolbroken", which
// enumerates one adapter but never opens.

#include <roster/backend.hpp>
#include <roster/tuning.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace tools_test {

inline roster::adapter_info fake_adapter(std::uint32_t ordinal) {
  roster::adapter_info a;
  a.backend = "toolfake";
  a.ordinal = ordinal;
  a.name = "Fake GPU " + std::to_string(ordinal);
  // TOOLFAKE_CPU: the adapter runs on the host's cores (a CPU pool), so
  // its figures are checked against the machine's load.
  a.type = std::getenv("TOOLFAKE_CPU") != nullptr ? roster::device_type::cpu : roster::device_type::discrete_gpu;
  for (std::size_t i = 0; i < 16; ++i) a.uuid[i] = static_cast<std::uint8_t>(0x10 * (ordinal + 1) + i);
  a.pci_address = "0000:00:0" + std::to_string(6 + ordinal) + ".0";
  a.vendor_id = 0x10de;
  a.device_id = 0x2335;
  a.memory_bytes = std::uint64_t{8} << 30;
  a.driver_version = "580.1";
  a.compute_units = 4;
  a.native_grid_sync = ordinal == 0;
  return a;
}

class fake_device final : public roster::device {
 public:
  explicit fake_device(roster::adapter_info a) : info_(std::move(a)) {}
  const roster::adapter_info& adapter() const noexcept override { return info_; }
  roster::device_caps caps() const noexcept override { return {info_.native_grid_sync, true, roster::op_set::all()}; }
  roster::expected<void> synchronize() override { return {}; }
  roster::expected<void> dispatch_steps(std::span<const roster::step> steps) override {
    // Time set by the test: TOOLFAKE_DISPATCH_US for every dispatch, and 8 ms
    // more for a program of shape TOOLFAKE_SLOW_NATIVE run in one launch (its
    // pieces, cut by the grid-sync split, are other shapes), so the bench's
    // native-or-split choice per shape is known in advance.
    if (const char* us = std::getenv("TOOLFAKE_DISPATCH_US"))
      std::this_thread::sleep_for(std::chrono::microseconds(std::atoi(us)));
    // TOOLFAKE_SLOW_TRIAD_MS: a program with a triad takes that much longer.
    if (const char* ms = std::getenv("TOOLFAKE_SLOW_TRIAD_MS"))
      for (const auto& s : steps)
        if (s.op == roster::op::triad) {
          std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
          break;
        }
    if (const char* slow = std::getenv("TOOLFAKE_SLOW_NATIVE"); slow != nullptr && roster::has_shape(steps, slow))
      std::this_thread::sleep_for(std::chrono::milliseconds(8));
    for (const auto& s : steps) {
      if (s.op == roster::op::grid_sync) continue;
      auto& o = mem_[s.out.slot];
      const auto* a = s.in1.owner ? &mem_[s.in1.slot] : nullptr;
      const auto* b = s.in2.owner ? &mem_[s.in2.slot] : nullptr;
      double sum = 0;
      switch (s.op) {
        case roster::op::fill: for (auto& x : o) x = s.scalar; break;
        case roster::op::copy: o = *a; break;
        case roster::op::mul: for (std::size_t i = 0; i < o.size(); ++i) o[i] = s.scalar * (*a)[i]; break;
        case roster::op::add: for (std::size_t i = 0; i < o.size(); ++i) o[i] = (*a)[i] + (*b)[i]; break;
        case roster::op::triad:
          for (std::size_t i = 0; i < o.size(); ++i) o[i] = (*a)[i] + s.scalar * (*b)[i];
          if (std::getenv("TOOLFAKE_WRONG_TRIAD") != nullptr && o.size() > 1) o[o.size() / 2] += 1.0;  // fast but wrong
          break;
        case roster::op::nstream: for (std::size_t i = 0; i < o.size(); ++i) o[i] += (*a)[i] + s.scalar * (*b)[i]; break;
        case roster::op::dot: for (std::size_t i = 0; i < a->size(); ++i) sum += (*a)[i] * (*b)[i]; o[0] = sum; break;
        default: break;
      }
    }
    // TOOLFAKE_WRONG_IN_ONE_LAUNCH: a program with a grid_sync run in one
    // launch leaves its last result off by one (fast but wrong); one-op
    // programs and the split's pieces stay right.
    const bool synced = std::any_of(steps.begin(), steps.end(),
                                    [](const roster::step& s) { return s.op == roster::op::grid_sync; });
    if (synced && std::getenv("TOOLFAKE_WRONG_IN_ONE_LAUNCH") != nullptr && !mem_[steps.back().out.slot].empty())
      mem_[steps.back().out.slot][0] += 1.0;
    return {};
  }

 protected:
  roster::expected<std::uint32_t> do_allocate(roster::element_type t, std::size_t n) override {
    // TOOLFAKE_MAX_ELEMENTS: a buffer larger than this does not fit, as a
    // bench of 2^36 elements does not fit a GPU.
    if (const char* most = std::getenv("TOOLFAKE_MAX_ELEMENTS"); most != nullptr && n > std::strtoull(most, nullptr, 10))
      return roster::make_error(roster::errc::out_of_memory,
                                info_.spec() + ": " + std::to_string(n) + " elements do not fit (test)",
                                "allocate fewer elements");
    mem_.emplace_back(n, 0.0);
    types_.push_back(t);
    live_.push_back(true);
    return static_cast<std::uint32_t>(mem_.size() - 1);
  }
  roster::expected<void> do_release(std::uint32_t slot) override {
    live_[slot] = false;
    mem_[slot].clear();
    mem_[slot].shrink_to_fit();
    return {};
  }
  bool owns(const roster::buffer& b) const noexcept override {
    return b.slot < mem_.size() && live_[b.slot] && types_[b.slot] == b.type && mem_[b.slot].size() == b.size;
  }
  roster::expected<void> do_upload(const roster::buffer& b, const void* src) override {
    for (std::size_t i = 0; i < b.size; ++i)
      mem_[b.slot][i] = b.type == roster::element_type::f32 ? static_cast<const float*>(src)[i]
                                                            : static_cast<const double*>(src)[i];
    return {};
  }
  roster::expected<void> do_download(const roster::buffer& b, void* dst) override {
    for (std::size_t i = 0; i < b.size; ++i) {
      if (b.type == roster::element_type::f32) static_cast<float*>(dst)[i] = static_cast<float>(mem_[b.slot][i]);
      else static_cast<double*>(dst)[i] = mem_[b.slot][i];
    }
    return {};
  }

 private:
  roster::adapter_info info_;
  std::vector<std::vector<double>> mem_;
  std::vector<roster::element_type> types_;
  std::vector<bool> live_;
};

struct toolfake_backend {
  static constexpr std::string_view id = "toolfake";
  static constexpr int rank = 5;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = fake_device;
  static roster::expected<std::unique_ptr<fake_device>> open(roster::open_key, std::uint32_t ordinal) {
    if (ordinal > 1)
      return roster::make_error(roster::errc::not_found, "toolfake:" + std::to_string(ordinal) + ": no such adapter",
                                "use toolfake:0 or toolfake:1");
    return std::make_unique<fake_device>(fake_adapter(ordinal));
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() {
    return std::vector<roster::adapter_info>{fake_adapter(0), fake_adapter(1)};
  }
};

struct toolbroken_backend {
  static constexpr std::string_view id = "toolbroken";
  static constexpr int rank = 7;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = fake_device;
  static roster::expected<std::unique_ptr<fake_device>> open(roster::open_key, std::uint32_t) {
    return roster::make_error(roster::errc::unavailable, "toolbroken: no usable driver (test)",
                              "install the toolbroken driver");
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() {
    auto a = fake_adapter(0);
    a.backend = "toolbroken";
    a.type = roster::device_type::other;
    a.uuid = {};
    a.pci_address.clear();
    a.native_grid_sync = false;
    return std::vector<roster::adapter_info>{a};
  }
};

}  // namespace tools_test
