#pragma once
#include <roster/roster.hpp>

// Runs triad on a device and checks it: 0 when every element is right.
int run_triad(roster::device& dev, std::size_t n);
