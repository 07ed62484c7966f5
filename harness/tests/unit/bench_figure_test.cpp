// The arithmetic of `relab bench`: percentiles, ratios and targets.
#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/figure.h"

namespace relab {

TEST(BenchFigureTest, percentile_is_nearest_rank_on_unsorted_samples) {
    std::vector<double> v;
    for (int i = 100; i >= 1; --i) v.push_back(i);  // 100 .. 1
    EXPECT_DOUBLE_EQ(percentile(v, 50), 50);
    EXPECT_DOUBLE_EQ(percentile(v, 99), 99);
    EXPECT_DOUBLE_EQ(percentile(v, 100), 100);
    EXPECT_DOUBLE_EQ(percentile(v, 0.5), 1);
    EXPECT_DOUBLE_EQ(percentile({7}, 50), 7);
    EXPECT_DOUBLE_EQ(percentile({3, 1, 2}, 50), 2);  // the median of three
    EXPECT_DOUBLE_EQ(percentile({1, 2}, 50), 1);     // rank ceil(1.0) = 1: the lower middle
    // 99% of 2000 is rank 1980 exactly, not 1981 from a rounding error.
    std::vector<double> big;
    for (int i = 1; i <= 2000; ++i) big.push_back(i);
    EXPECT_DOUBLE_EQ(percentile(big, 99), 1980);
    EXPECT_DOUBLE_EQ(percentile(big, 50), 1000);
}

TEST(BenchFigureTest, percentile_refuses_no_samples_and_out_of_range_p) {
    EXPECT_THROW(percentile({}, 50), std::invalid_argument);
    EXPECT_THROW(percentile({1}, 0), std::invalid_argument);
    EXPECT_THROW(percentile({1}, 101), std::invalid_argument);
}

TEST(BenchFigureTest, safe_ratio_is_empty_for_figures_that_were_not_measured) {
    EXPECT_DOUBLE_EQ(*safe_ratio(12, 10), 1.2);
    EXPECT_FALSE(safe_ratio(12, 0).has_value());
    EXPECT_FALSE(safe_ratio(12, -1).has_value());
    EXPECT_FALSE(safe_ratio(std::nan(""), 10).has_value());
}

TEST(BenchFigureTest, met_checks_the_field_the_target_is_for_in_its_direction) {
    BenchFigure f;
    EXPECT_FALSE(f.met().has_value());  // no target
    f.target = 1.2;
    EXPECT_FALSE(f.met().has_value());  // no ratio to check
    f.ratio = 1.2;
    EXPECT_EQ(f.met(), true);  // at most 1.2, boundary included
    f.ratio = 1.21;
    EXPECT_EQ(f.met(), false);

    BenchFigure sim;
    sim.target = 100000;
    sim.target_kind = TargetKind::at_least;
    sim.target_of = "items_per_second";
    sim.ratio = 1.9;  // the speed-up, not what the target is about
    sim.items_per_second = 99999;
    EXPECT_EQ(sim.met(), false);
    sim.items_per_second = 100000;
    EXPECT_EQ(sim.met(), true);
}

}  // namespace relab
