// How sure a wrong count is: the rate with its Wilson score interval, which stays inside [0, 1]
// and is honest at 0/n and n/n, where the normal approximation claims a zero-width interval.
#pragma once

#include "check/outcome.h"

namespace relab {

struct RateInterval {
    double rate = 0;
    double low = 0;
    double high = 1;
};

// k wrong of n at the z of a two-sided 95% interval. n = 0 gives rate 0 in [0, 1].
RateInterval wilson_interval(int k, int n, double z = 1.959963984540054);

// How many failing seeds a lab lists.
inline constexpr size_t kFailingSeedsShown = 5;

// Sets the lab's wrong_rate, its interval and failing_seeds (the first wrong trials' seeds) from
// its wrong/total and trials.
void fill_wrong_rate(LabResult& lab);

}  // namespace relab
