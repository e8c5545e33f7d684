// Must not compile: the bridge macro checks the backend contract.
#include "fake_backend.hpp"
struct not_a_backend {
  static constexpr std::string_view id = "nope";
};
ROSTER_REGISTER_STATIC_BACKEND(not_a_backend);
int main() { return 0; }
