// Must not compile: get<id> names a backend the registry does not list.
#include "fake_backend.hpp"
using registry = roster::static_registry<roster_test::fake_backend<"cpu", 1>>;
using missing = decltype(registry::get<"cuda">())::type;
int main() { return 0; }
