#include <gtest/gtest.h>

#include "check/wrong_rate.h"
#include "ports/seed_text.h"

namespace relab {

TEST(WilsonIntervalTest, matches_known_values_and_stays_inside_zero_one) {
    const RateInterval none = wilson_interval(0, 10);
    EXPECT_DOUBLE_EQ(none.rate, 0);
    EXPECT_DOUBLE_EQ(none.low, 0);
    EXPECT_NEAR(none.high, 0.2775, 1e-4);
    const RateInterval all = wilson_interval(10, 10);
    EXPECT_NEAR(all.low, 0.7225, 1e-4);
    EXPECT_DOUBLE_EQ(all.high, 1);
    const RateInterval some = wilson_interval(362, 10000);
    EXPECT_DOUBLE_EQ(some.rate, 0.0362);
    EXPECT_NEAR(some.low, 0.03271, 1e-5);
    EXPECT_NEAR(some.high, 0.04004, 1e-5);
    const RateInterval empty = wilson_interval(0, 0);
    EXPECT_DOUBLE_EQ(empty.low, 0);
    EXPECT_DOUBLE_EQ(empty.high, 1);
}

TEST(WilsonIntervalTest, fill_lists_the_first_failing_seeds_in_trial_order) {
    LabResult lab;
    for (int t = 1; t <= 9; ++t) {
        TrialOutcome o;
        o.trial = t;
        o.seed = 100 + static_cast<uint64_t>(t);
        o.wrong = t % 2 == 0;
        lab.trials.push_back(o);
    }
    lab.total = 9;
    lab.wrong = 4;
    fill_wrong_rate(lab);
    EXPECT_EQ(lab.failing_seeds, (std::vector<uint64_t>{102, 104, 106, 108}));
    EXPECT_NEAR(lab.wrong_rate, 4.0 / 9, 1e-12);
    EXPECT_LT(lab.wrong_rate_low, lab.wrong_rate);
    EXPECT_GT(lab.wrong_rate_high, lab.wrong_rate);
}

TEST(SeedTextTest, seeds_print_as_hex_and_read_back_in_hex_or_decimal) {
    EXPECT_EQ(seed_text(0x24692e7009b863e2ULL), "0x24692e7009b863e2");
    EXPECT_EQ(seed_text(1), "0x0000000000000001");
    EXPECT_EQ(parse_seed("0x24692e7009b863e2"), 0x24692e7009b863e2ULL);
    EXPECT_EQ(parse_seed("0XFF"), 255u);
    EXPECT_EQ(parse_seed("18446744073709551615"), UINT64_MAX);
    EXPECT_THROW(parse_seed("18446744073709551616"), std::invalid_argument);
    EXPECT_THROW(parse_seed("0x"), std::invalid_argument);
    EXPECT_THROW(parse_seed("12abc"), std::invalid_argument);
    EXPECT_THROW(parse_seed("-1"), std::invalid_argument);
    EXPECT_THROW(parse_seed("0x1234567890abcdef0"), std::invalid_argument);
}

}  // namespace relab
