#pragma once
// A registry test device that only reports its adapter: it allocates nothing
// and runs nothing. For tests and benchmarks of the layers above devices.

#include <roster/backend.hpp>

#include <utility>

namespace roster_test_support {

class identity_device final : public roster::device {
 public:
  explicit identity_device(roster::adapter_info info) : info_(std::move(info)) {}
  const roster::adapter_info& adapter() const noexcept override { return info_; }
  roster::device_caps caps() const noexcept override { return {true, true, roster::op_set::all()}; }
  roster::expected<void> synchronize() override { return {}; }
  roster::expected<void> dispatch_steps(std::span<const roster::step>) override { return {}; }

 protected:
  roster::expected<std::uint32_t> do_allocate(roster::element_type, std::size_t) override { return 0u; }
  roster::expected<void> do_release(std::uint32_t) override { return {}; }
  bool owns(const roster::buffer&) const noexcept override { return false; }
  roster::expected<void> do_upload(const roster::buffer&, const void*) override { return {}; }
  roster::expected<void> do_download(const roster::buffer&, void*) override { return {}; }

 private:
  roster::adapter_info info_;
};

}  // namespace roster_test_support
