// The anchor: {fmt} header-only, the shape roster's header-only switch follows.
#define FMT_HEADER_ONLY
#include <fmt/format.h>
