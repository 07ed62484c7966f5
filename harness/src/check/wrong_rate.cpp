#include "check/wrong_rate.h"

#include <algorithm>
#include <cmath>

namespace relab {

RateInterval wilson_interval(int k, int n, double z) {
    RateInterval r;
    if (n <= 0) return r;
    const double nn = n;
    const double p = static_cast<double>(k) / nn;
    const double z2 = z * z;
    const double denom = 1 + z2 / nn;
    const double centre = (p + z2 / (2 * nn)) / denom;
    const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / denom;
    r.rate = p;
    r.low = std::max(0.0, centre - half);
    r.high = std::min(1.0, centre + half);
    // At the edges the bound is exact; keep rounding from putting it a hair inside.
    if (k == 0) r.low = 0;
    if (k == n) r.high = 1;
    return r;
}

void fill_wrong_rate(LabResult& lab) {
    const RateInterval ci = wilson_interval(lab.wrong, lab.total);
    lab.wrong_rate = ci.rate;
    lab.wrong_rate_low = ci.low;
    lab.wrong_rate_high = ci.high;
    lab.failing_seeds.clear();
    for (const auto& t : lab.trials) {
        if (lab.failing_seeds.size() >= kFailingSeedsShown) break;
        if (t.wrong) lab.failing_seeds.push_back(t.seed);
    }
}

}  // namespace relab
