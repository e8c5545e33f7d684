#pragma once
/// Measured ranking: puts the tuning records into the score hook that
/// circuits offers (roster::set_score_provider). Circuits knows nothing of
/// tuning; this layer, above both, connects them.

#include <roster/circuits.hpp>
#include <roster/config.hpp>
#include <roster/tuning.hpp>

namespace roster {

/// Makes circuits() rank circuits of one type by measured triad bandwidth from
/// the default tuning file (roster::set_score_provider); takes effect at the
/// next scan. roster-info calls it; an application calls it once at start-up.
ROSTER_API ROSTER_INLINE void use_tuning_ranking();

}  // namespace roster

#if defined(ROSTER_HEADER_ONLY)
#  include <roster/detail/ranking-inl.hpp>
#endif
