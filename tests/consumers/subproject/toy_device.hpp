// A small host device for the consumer tests: buffers in host memory, the
// element-wise ops fill, copy and triad, float and double. A real backend
// looks like backends/cpu; this one only shows what registering takes.
#pragma once

#include <roster/backend.hpp>

#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace toy {

class device final : public roster::device {
 public:
  explicit device(std::string_view backend_id) {
    info_.backend = std::string(backend_id);
    info_.name = "toy host device";
    info_.type = roster::device_type::cpu;
    info_.native_grid_sync = true;
    info_.ops = ops();
  }
  static constexpr roster::op_set ops() {
    return roster::op_set::of({roster::op::fill, roster::op::copy, roster::op::triad, roster::op::grid_sync});
  }
  const roster::adapter_info& adapter() const noexcept override { return info_; }
  roster::device_caps caps() const noexcept override { return {true, true, ops()}; }
  roster::expected<void> synchronize() override { return {}; }
  roster::expected<void> dispatch_steps(std::span<const roster::step> steps) override {
    for (const auto& s : steps) {
      if (s.op == roster::op::grid_sync) continue;
      if (s.out.type == roster::element_type::f32)
        run<float>(s);
      else
        run<double>(s);
    }
    return {};
  }

 protected:
  roster::expected<std::uint32_t> do_allocate(roster::element_type t, std::size_t n) override {
    memory_.emplace_back(roster::size_of(t) * n);
    return static_cast<std::uint32_t>(memory_.size() - 1);
  }
  roster::expected<void> do_release(std::uint32_t slot) override {
    memory_[slot] = {};
    return {};
  }
  bool owns(const roster::buffer& b) const noexcept override {
    return b.slot < memory_.size() && memory_[b.slot].size() == roster::size_of(b.type) * b.size;
  }
  roster::expected<void> do_upload(const roster::buffer& b, const void* src) override {
    std::memcpy(memory_[b.slot].data(), src, memory_[b.slot].size());
    return {};
  }
  roster::expected<void> do_download(const roster::buffer& b, void* dst) override {
    std::memcpy(dst, memory_[b.slot].data(), memory_[b.slot].size());
    return {};
  }

 private:
  template <class T>
  T* data(const roster::buffer& b) { return reinterpret_cast<T*>(memory_[b.slot].data()); }
  template <class T>
  void run(const roster::step& s) {
    T* out = data<T>(s.out);
    for (std::size_t i = 0; i < s.out.size; ++i) {
      if (s.op == roster::op::fill) out[i] = static_cast<T>(s.scalar);
      if (s.op == roster::op::copy) out[i] = data<T>(s.in1)[i];
      if (s.op == roster::op::triad) out[i] = data<T>(s.in1)[i] + static_cast<T>(s.scalar) * data<T>(s.in2)[i];
    }
  }
  roster::adapter_info info_;
  std::vector<std::vector<unsigned char>> memory_;  // by slot; a released slot is empty
};

/// Opens the toy adapter `ordinal` (only 0 exists) for backend `id`.
inline roster::expected<std::unique_ptr<device>> open(std::string_view id, std::uint32_t ordinal) {
  if (ordinal != 0)
    return roster::make_error(roster::errc::not_found, std::string(id) + ": no adapter " + std::to_string(ordinal),
                              "use " + std::string(id) + ":0");
  return std::make_unique<device>(id);
}

/// Lists the one toy adapter of backend `id`.
inline roster::expected<std::vector<roster::adapter_info>> enumerate(std::string_view id) {
  return std::vector<roster::adapter_info>{device(id).adapter()};
}

}  // namespace toy
