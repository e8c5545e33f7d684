// The baseline of the compile-cost rows: the standard headers roster's public
// headers use, and nothing else.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>
