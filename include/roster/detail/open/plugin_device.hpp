#pragma once
// Private: a device of a backend plugin, counted while it lives. The open
// path wraps every device a plugin's factory returns in one; while any
// lives, unload_plugin refuses to unmap the code it runs (a device held
// across an unload was a SIGSEGV at its next call).

#include <roster/device_interface.hpp>
#include <roster/native.hpp>
#include <roster/plugins.hpp>

#include <memory>
#include <utility>

namespace roster::detail {

class plugin_device final : public device {
 public:
  /// Takes a device the plugin `handle` opened; the hold is already counted.
  plugin_device(std::unique_ptr<device> inner, void* handle) noexcept
      : device(inner->id()), inner_(std::move(inner)), handle_(handle) {}
  ~plugin_device() override {
    inner_.reset();  // the plugin's code runs here, so the count drops after it
    release_plugin_hold(handle_);
  }
  const adapter_info& adapter() const noexcept override { return inner_->adapter(); }
  device_caps caps() const noexcept override { return inner_->caps(); }
  expected<void> synchronize() override { return inner_->synchronize(); }
  expected<void> dispatch_steps(std::span<const step> steps) override { return inner_->dispatch_steps(steps); }
  expected<duration_ns> timed_dispatch_steps(std::span<const step> steps) override {
    return inner_->timed_dispatch_steps(steps);
  }
  void use_kernel_choices(std::span<const kernel_choice> choices) noexcept override {
    device::use_kernel_choices(choices);
    inner_->use_kernel_choices(choices);
  }

 protected:
  expected<std::uint32_t> do_allocate(element_type t, std::size_t n) override {
    return native_access::allocate(*inner_, t, n);
  }
  expected<void> do_release(std::uint32_t slot) override { return native_access::release(*inner_, slot); }
  bool owns(const buffer& b) const noexcept override { return native_access::owns(*inner_, b); }
  expected<void> do_upload(const buffer& b, const void* src) override {
    return native_access::upload(*inner_, b, src);
  }
  expected<void> do_download(const buffer& b, void* dst) override {
    return native_access::download(*inner_, b, dst);
  }
  expected<bool> do_native(std::uint64_t kind, void* out) override {
    return native_access::native(*inner_, kind, out);
  }
  expected<bool> do_native_buffer(const buffer& b, std::uint64_t kind, void* out) override {
    return native_access::native_buffer(*inner_, b, kind, out);
  }
  void on_split_wrapped() noexcept override { native_access::split_wrapped(*inner_); }

 private:
  std::unique_ptr<device> inner_;
  void* handle_;
};

}  // namespace roster::detail
