// Must compile: the control for the compile-fail tests (same flags, valid code).
#include "fake_backend.hpp"
using registry = roster::static_registry<roster_test::fake_backend<"cpu", 1>, roster_test::fake_backend<"gpu", 0>>;
static_assert(registry::ids()[0] == "gpu");
using found = decltype(registry::get<"cpu">())::type;
ROSTER_REGISTER_STATIC_BACKEND(found);
int main() { return 0; }
