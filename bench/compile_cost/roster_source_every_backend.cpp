// The one ROSTER_SOURCE file of a one-file program with every backend
// (README's first program, tests/consumers/one_file): roster's bodies and the
// CPU, CUDA, OpenCL and Vulkan backends', compiled once per program.
#define ROSTER_SOURCE
#include <roster/backends/cpu.hpp>
#include <roster/backends/cuda.hpp>
#include <roster/backends/opencl.hpp>
#include <roster/backends/vulkan.hpp>
#include <roster/roster.hpp>
