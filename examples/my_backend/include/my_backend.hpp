#pragma once
// my_backend: a small backend of your own, in roster's shape. It runs every
// op of a program on buffers in host memory, one step after another, on the
// calling thread. Its id is "myhost"; it is not roster's "cpu" backend.

#include <roster/backend.hpp>
#include <roster/kernels.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace my_backend {

/// The entry point of a user's kernel on this backend (its kernel payload): a
/// host function over the whole index space of a call.
struct kernel_function {
  static constexpr std::uint64_t payload_id = roster::payload_id_of("my_backend::kernel_function/1");
  void (*run)(const roster::kernel_args& args) = nullptr;
};

/// Returns a kernel entry of this backend with signature P..., for ROSTER_KERNEL.
template <class... P>
constexpr roster::kernel_entry kernel(std::string_view op, std::string_view variant, bool is_default,
                                      const kernel_function* f) noexcept {
  return roster::kernel_entry_of<P...>(op, "myhost", variant, is_default, roster::payload_of(f));
}

/// One opened adapter: buffers are host vectors, dispatch runs the steps in order.
/// Not thread-safe: use one device per thread, or serialise the calls.
class device final : public roster::device {
 public:
  /// Opens the one adapter.
  [[nodiscard]] static roster::expected<std::unique_ptr<device>> open();

  [[nodiscard]] const roster::adapter_info& adapter() const noexcept override { return adapter_; }
  [[nodiscard]] roster::device_caps caps() const noexcept override;
  [[nodiscard]] roster::expected<void> synchronize() override { return {}; }
  [[nodiscard]] roster::expected<void> dispatch_steps(std::span<const roster::step> steps) override;

 protected:
  [[nodiscard]] roster::expected<std::uint32_t> do_allocate(roster::element_type t, std::size_t n) override;
  [[nodiscard]] roster::expected<void> do_release(std::uint32_t slot) override;
  [[nodiscard]] bool owns(const roster::buffer& b) const noexcept override;
  [[nodiscard]] roster::expected<void> do_upload(const roster::buffer& b, const void* src) override;
  [[nodiscard]] roster::expected<void> do_download(const roster::buffer& b, void* dst) override;

 private:
  struct memory {
    roster::element_type type = roster::element_type::f64;
    std::size_t size = 0;
    std::vector<float> f32;
    std::vector<double> f64;
  };
  device();
  template <class T>
  T* data(const roster::buffer& b);
  template <class T>
  void run(const roster::step& s);
  [[nodiscard]] roster::expected<void> run_call(const roster::kernel_call& call);

  roster::adapter_info adapter_;
  std::unordered_map<std::uint32_t, memory> memory_;  // by slot
  std::uint32_t next_slot_ = 1;                       // never reused: a released handle stays invalid
};

/// The type ROSTER_REGISTER_BACKEND registers (src/backend.cpp).
struct backend {
  static constexpr std::string_view id = "myhost";
  static constexpr int rank = 200;  // after roster's cpu (100): lower wins
  static constexpr bool dispatches = true;
  static constexpr roster::op_set ops = roster::op_set::all();
  using device_type = my_backend::device;
  using kernel_payload = kernel_function;  // what its users' kernel entries carry
  /// Opens adapter `ordinal`; there is only 0.
  [[nodiscard]] static roster::expected<std::unique_ptr<device_type>> open(roster::open_key, std::uint32_t ordinal);
  /// Lists the one adapter.
  [[nodiscard]] static roster::expected<std::vector<roster::adapter_info>> enumerate();
};

}  // namespace my_backend
