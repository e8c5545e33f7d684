#pragma once
// Private: the score provider that ranks circuits by tuning records.

#include <roster/ranking.hpp>
#include <roster/detail/env.hpp>
#include <roster/detail/text.hpp>

namespace roster {

ROSTER_INLINE void use_tuning_ranking() {
  set_score_provider([](const adapter_info& a) -> std::optional<double> {
    auto m = detail::find_tuning_traced(current_tuning(), a);
    if (m.record == nullptr) return std::nullopt;
    auto triad = m.record->triad_bandwidth();
    if (triad) detail::trace("tuning: " + a.spec() + ": ranked by record: triad " + detail::fixed(*triad) + " GB/s");
    return triad;
  });
}

}  // namespace roster
