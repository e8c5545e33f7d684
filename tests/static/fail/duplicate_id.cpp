// Must not compile: two backends in one static registry share the id "cpu".
#include "fake_backend.hpp"
using one = roster_test::fake_backend<"cpu", 1>;
using two = roster_test::fake_backend<"cpu", 2>;
using registry = roster::static_registry<one, two>;
static_assert(registry::size == 2);
int main() { return 0; }
