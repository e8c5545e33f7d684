#pragma once
/// Tuning records: the model (tuning/record.hpp), the file format
/// (tuning/format.hpp) and the store (tuning/store.hpp).

#include <roster/tuning/format.hpp>
#include <roster/tuning/record.hpp>
#include <roster/tuning/store.hpp>
