// The compiled library: the out-of-line code of every core header, once,
// lowest layer first (scripts/layers.txt).
#include <roster/detail/env-inl.hpp>
#include <roster/detail/decision-inl.hpp>
#include <roster/detail/inventory-inl.hpp>
#include <roster/detail/program-inl.hpp>
#include <roster/detail/kernels-inl.hpp>
#include <roster/detail/spec-inl.hpp>
#include <roster/detail/plugins-inl.hpp>
#include <roster/detail/backend_id-inl.hpp>
#include <roster/detail/backend-inl.hpp>
#include <roster/detail/native-inl.hpp>
#include <roster/detail/tuning/record-inl.hpp>
#include <roster/detail/tuning/format-inl.hpp>
#include <roster/detail/acquire-inl.hpp>
#include <roster/detail/tuning/store-inl.hpp>
#include <roster/detail/variants-inl.hpp>
#include <roster/detail/device-inl.hpp>
#include <roster/detail/select-inl.hpp>
#include <roster/detail/circuits-inl.hpp>
#include <roster/detail/binding-inl.hpp>
#include <roster/detail/decide-inl.hpp>
