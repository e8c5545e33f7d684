// roster.cpp: roster and its CPU, Vulkan and OpenCL backends, compiled once.
#define ROSTER_SOURCE
#include <roster/backends/cpu.hpp>
#include <roster/backends/opencl.hpp>
#include <roster/backends/vulkan.hpp>
#include <roster/roster.hpp>
