// Registers the tools suite's test backends.
#include "fake_backend.hpp"

ROSTER_REGISTER_BACKEND(tools_test::toolfake_backend);
ROSTER_REGISTER_BACKEND(tools_test::toolbroken_backend);
