// my_backend's entry points and its registration in roster's inventory.

#include <my_backend.hpp>

#include <string>

namespace my_backend {

roster::expected<std::unique_ptr<device>> backend::open(roster::open_key, std::uint32_t ordinal) {
  if (ordinal != 0)
    return roster::make_error(roster::errc::not_found, "myhost:" + std::to_string(ordinal) + ": no such adapter",
                              "use myhost:0, the only adapter of this backend");
  return device::open();
}

roster::expected<std::vector<roster::adapter_info>> backend::enumerate() {
  auto d = device::open();
  if (!d) return std::move(d).error();
  return std::vector<roster::adapter_info>{(*d)->adapter()};
}

}  // namespace my_backend

// The registration: three linker-section entries, checked against the
// roster::backend concept here. Nothing calls into this file, so link it
// whole, or reference the anchor with ROSTER_USE_BACKEND(myhost).
ROSTER_REGISTER_BACKEND(my_backend::backend);
ROSTER_DEFINE_BACKEND_ANCHOR(myhost);
