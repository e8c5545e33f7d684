// The compiled library: the out-of-line code of every core header, once,
// lowest layer first (scripts/layers.txt).
#include <roster/detail/base/env-inl.hpp>
#include <roster/detail/base/noise_rule-inl.hpp>
#include <roster/detail/inventory/inventory-inl.hpp>
#include <roster/detail/backend/program-inl.hpp>
#include <roster/detail/backend/kernels-inl.hpp>
#include <roster/detail/backend/spec-inl.hpp>
#include <roster/detail/backend/plugins-inl.hpp>
#include <roster/detail/backend/backend_id-inl.hpp>
#include <roster/detail/backend/backend-inl.hpp>
#include <roster/detail/backend/native-inl.hpp>
#include <roster/detail/tuning/record-inl.hpp>
#include <roster/detail/tuning/format-inl.hpp>
#include <roster/detail/open/acquire-inl.hpp>
#include <roster/detail/store/store-inl.hpp>
#include <roster/detail/store/variants-inl.hpp>
#include <roster/detail/store/output-inl.hpp>
#include <roster/detail/devices/device_cache-inl.hpp>
#include <roster/detail/devices/select-inl.hpp>
#include <roster/detail/circuits/circuits-inl.hpp>
#include <roster/detail/decision/binding-inl.hpp>
#include <roster/detail/decision/decide-inl.hpp>

// The library compiles roster's bodies (<roster/roster.hpp> refers to this).
ROSTER_IMPL_DEFINE_LINK_SYMBOL(ROSTER_IMPL_CORE_BODIES_SYMBOL);
