#pragma once
/// The old path of the device cache header, kept so existing includes build:
/// the cache is roster/device_cache.hpp, the device class
/// roster/device_interface.hpp.

#include <roster/device_cache.hpp>
