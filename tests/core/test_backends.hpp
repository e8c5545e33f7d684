#pragma once
// Registry test backends for the core suite: a device that keeps its buffers
// in host vectors and records every piece of program it is asked to run.

#include <roster/roster.hpp>

#include <memory>
#include <string>
#include <vector>

namespace roster_test {

// The pieces the last recording device received, in order.
inline std::vector<std::vector<roster::step>>& recorded_pieces() {
  static std::vector<std::vector<roster::step>> pieces;
  return pieces;
}

class recording_device final : public roster::device {
 public:
  recording_device(std::string_view id, bool native_sync, roster::device_type type = roster::device_type::other,
                   std::uint8_t uuid_tag = 0) {
    info_.backend = std::string(id);
    info_.name = "recording device";
    info_.native_grid_sync = native_sync;
    info_.type = type;
    info_.uuid[0] = uuid_tag;
  }
  const roster::adapter_info& adapter() const noexcept override { return info_; }
  roster::device_caps caps() const noexcept override { return {info_.native_grid_sync, f64_, roster::op_set::all()}; }
  // Turns double support off after buffers exist, to reach dispatch's own check.
  void set_f64(bool on) noexcept { f64_ = on; }
  roster::expected<void> synchronize() override { return {}; }
  roster::expected<void> dispatch_steps(std::span<const roster::step> steps) override {
    recorded_pieces().emplace_back(steps.begin(), steps.end());
    return {};
  }

 protected:
  roster::expected<std::uint32_t> do_allocate(roster::element_type t, std::size_t n) override {
    memory_.push_back({std::vector<double>(n), t, true});
    return static_cast<std::uint32_t>(memory_.size() - 1);
  }
  roster::expected<void> do_release(std::uint32_t slot) override {
    memory_[slot].live = false;
    return {};
  }
  bool owns(const roster::buffer& b) const noexcept override {
    return b.slot < memory_.size() && memory_[b.slot].live && memory_[b.slot].type == b.type &&
           memory_[b.slot].data.size() == b.size;
  }
  roster::expected<void> do_upload(const roster::buffer&, const void*) override { return {}; }
  roster::expected<void> do_download(const roster::buffer&, void*) override { return {}; }

 private:
  struct slot {
    std::vector<double> data;
    roster::element_type type;
    bool live;
  };
  roster::adapter_info info_;
  std::vector<slot> memory_;
  bool f64_ = true;
};

}  // namespace roster_test
