#pragma once
/// Includes the whole public API of roster's core.

#include <roster/acquire.hpp>
#include <roster/backend.hpp>
#include <roster/binding.hpp>
#include <roster/circuits.hpp>
#include <roster/occupancy.hpp>
#include <roster/decide.hpp>
#include <roster/device_cache.hpp>
#include <roster/env.hpp>
#include <roster/error.hpp>
#include <roster/inventory.hpp>
#include <roster/kernels.hpp>
#include <roster/native.hpp>
#include <roster/noise_rule.hpp>
#include <roster/plugins.hpp>
#include <roster/program.hpp>
#include <roster/select.hpp>
#include <roster/spec.hpp>
#include <roster/split.hpp>
#include <roster/tuning.hpp>
#include <roster/variants.hpp>

// Where this file compiles roster's bodies, say so to the linker; in library
// mode, need them (<roster/backend.hpp>, ROSTER_IMPL_CORE_BODIES_SYMBOL).
#if defined(ROSTER_IMPL_WITH_INL)
ROSTER_IMPL_DEFINE_LINK_SYMBOL(ROSTER_IMPL_CORE_BODIES_SYMBOL);
#else
ROSTER_IMPL_NEED_LINK_SYMBOL(ROSTER_IMPL_CORE_BODIES_SYMBOL, needs_roster_bodies);
#endif
