// The backend plugin the stress test opens and closes in a loop: one backend,
// registered with ROSTER_REGISTER_BACKEND, whose device does nothing.
#include <roster/roster.hpp>

#include <memory>
#include <vector>

namespace {

class idle_device final : public roster::device {
 public:
  idle_device() {
    info_.backend = "test_registry_backend_plugin";
    info_.name = "stress plugin";
  }
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

struct plugin_backend {
  static constexpr std::string_view id = "test_registry_backend_plugin";
  static constexpr int rank = 500;
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = idle_device;
  static roster::expected<std::unique_ptr<idle_device>> open(std::uint32_t ordinal) {
    if (ordinal != 0) return roster::make_error(roster::errc::not_found, "stress plugin: one adapter", "use ordinal 0");
    return std::make_unique<idle_device>();
  }
  static roster::expected<std::vector<roster::adapter_info>> enumerate() {
    return std::vector<roster::adapter_info>{idle_device().adapter()};
  }
};

}  // namespace

ROSTER_REGISTER_BACKEND(plugin_backend);
