#include "bench/figure.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace relab {

std::optional<double> BenchFigure::target_value() const {
    return target_of == "items_per_second" ? items_per_second : ratio;
}

std::optional<bool> BenchFigure::met() const {
    const std::optional<double> v = target_value();
    if (!target || !v) return std::nullopt;
    return target_kind == TargetKind::at_most ? *v <= *target : *v >= *target;
}

double percentile(std::vector<double> samples, double p) {
    if (samples.empty()) throw std::invalid_argument("percentile of no samples");
    if (!(p > 0 && p <= 100)) throw std::invalid_argument("percentile outside (0, 100]");
    // Rank ceil(p/100 × n), 1-based; the small epsilon keeps 99% of 2000 at rank 1980, not 1981,
    // when the product comes out as 1980.0000000002.
    const double exact = p / 100.0 * static_cast<double>(samples.size());
    size_t rank = static_cast<size_t>(std::ceil(exact - 1e-9));
    rank = std::clamp<size_t>(rank, 1, samples.size());
    std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank - 1), samples.end());
    return samples[rank - 1];
}

std::optional<double> safe_ratio(double a, double b) {
    if (!std::isfinite(a) || !std::isfinite(b) || b <= 0) return std::nullopt;
    return a / b;
}

}  // namespace relab
