#pragma once
/// The grid-sync split, the first wrapper roster::acquire applies: cuts a
/// program at each grid_sync and dispatches the pieces in order, for a device
/// without native grid-wide sync, or only the program shapes a tuning record
/// measured faster cut.

#include <roster/backend.hpp>
#include <roster/config.hpp>
#include <roster/error.hpp>
#include <roster/program.hpp>

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace roster {

/// The grid-sync split: cuts a program at each grid_sync and dispatches the
/// pieces in order, for a device without native grid-wide sync; or, made
/// with a list of program shapes, only programs of those shapes (the ones a
/// tuning record measured faster cut), the rest in one native dispatch.
template <class Inner = device>
class grid_sync_split final : public device {
 public:
  /// Wraps a device, sharing its id so its buffers stay valid; cuts every program.
  explicit grid_sync_split(std::unique_ptr<Inner> inner) noexcept
      : device(inner->id()), inner_(std::move(inner)) {
    static_cast<device&>(*inner_).on_split_wrapped();
  }
  /// Wraps a device with native grid sync; cuts only programs whose
  /// roster::program_shape is one of `shapes`.
  grid_sync_split(std::unique_ptr<Inner> inner, std::vector<std::string> shapes) noexcept
      : device(inner->id()), inner_(std::move(inner)), shapes_(std::move(shapes)), every_(false) {}
  [[nodiscard]] const adapter_info& adapter() const noexcept override { return inner_->adapter(); }
  [[nodiscard]] device_caps caps() const noexcept override {
    auto c = inner_->caps();
    if (every_) c.native_grid_sync = false;
    return c;
  }
  [[nodiscard]] expected<void> synchronize() override { return inner_->synchronize(); }
  void use_kernel_choices(std::span<const kernel_choice> choices) noexcept override {
    device::use_kernel_choices(choices);                        // kernel_for here answers as the inner does
    static_cast<device&>(*inner_).use_kernel_choices(choices);  // the inner device runs the calls
  }
  /// Returns whether a program of these steps is cut at its grid_syncs.
  [[nodiscard]] bool cuts(std::span<const step> steps) const noexcept {
    if (every_) return true;
    for (const auto& shape : shapes_)
      if (has_shape(steps, shape)) return true;
    return false;
  }
  [[nodiscard]] expected<void> dispatch_steps(std::span<const step> steps) override {
    if (!cuts(steps)) return inner_->dispatch_steps(steps);
    for (auto piece : split_at_grid_sync(steps))
      if (auto ok = inner_->dispatch_steps(piece); !ok) return ok;
    return {};
  }
  [[nodiscard]] expected<duration_ns> timed_dispatch_steps(std::span<const step> steps) override {
    if (!cuts(steps)) return inner_->timed_dispatch_steps(steps);
    duration_ns total{0};
    for (auto piece : split_at_grid_sync(steps)) {
      auto t = inner_->timed_dispatch_steps(piece);
      if (!t) return std::move(t).error();
      total += *t;
    }
    return total;
  }
  /// Returns the wrapped device.
  [[nodiscard]] Inner& inner() noexcept { return *inner_; }

 protected:
  expected<std::uint32_t> do_allocate(element_type t, std::size_t n) override { return base().do_allocate(t, n); }
  expected<void> do_release(std::uint32_t slot) override { return base().do_release(slot); }
  bool owns(const buffer& b) const noexcept override { return static_cast<const device&>(*inner_).owns(b); }
  expected<void> do_upload(const buffer& b, const void* src) override { return base().do_upload(b, src); }
  expected<void> do_download(const buffer& b, void* dst) override { return base().do_download(b, dst); }
  expected<bool> do_native(std::uint64_t kind, void* out) override { return base().do_native(kind, out); }
  expected<bool> do_native_buffer(const buffer& b, std::uint64_t kind, void* out) override {
    return base().do_native_buffer(b, kind, out);
  }

 private:
  device& base() noexcept { return *inner_; }
  std::unique_ptr<Inner> inner_;
  std::vector<std::string> shapes_;
  bool every_ = true;
};

}  // namespace roster
