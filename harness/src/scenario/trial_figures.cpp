#include "scenario/trial_figures.h"

#include "util/check.h"

namespace relab {

int64_t hol_blocked_pct(const LoadStats& l) {
    RELAB_CHECK(l.hol_blocked >= 0 && l.hol_blocked <= l.hol_events, "more events blocked than waited");
    return l.hol_events > 0 ? (100 * l.hol_blocked + l.hol_events / 2) / l.hol_events : 0;
}

std::optional<int64_t> load_figure(const LoadStats& l, std::string_view name) { return desc::figure(l, name); }

std::optional<int64_t> soak_figure(const SoakStats& s, std::string_view name) { return desc::figure(s, name); }

}  // namespace relab
