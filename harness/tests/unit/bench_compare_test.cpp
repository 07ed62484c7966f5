// `relab bench --compare`: old against new for each name in both files.
#include <gtest/gtest.h>

#include "bench/bench_compare.h"
#include "bench/bench_text.h"

namespace relab {

namespace bench_compare_test {

BenchFigure fig(const std::string& name, double time, const std::string& unit = "us",
                std::optional<double> ratio = std::nullopt) {
    BenchFigure f;
    f.name = name;
    f.real_time = time;
    f.time_unit = unit;
    f.ratio = ratio;
    return f;
}

TEST(BenchCompareTest, pairs_names_in_the_new_runs_order_and_lists_the_rest) {
    const std::vector<BenchFigure> old_run = {fig("redis/XADD", 20, "us", 1.1), fig("gone", 1), fig("ping/p50", 10)};
    const std::vector<BenchFigure> new_run = {fig("ping/p50", 12), fig("redis/XADD", 15, "us", 0.9), fig("fresh", 3)};
    const BenchComparison c = compare_benchmarks(old_run, new_run);
    ASSERT_EQ(c.both.size(), 2u);
    EXPECT_EQ(c.both[0].name, "ping/p50");
    EXPECT_NEAR(*c.both[0].change_pct, 20.0, 1e-9);  // slower
    EXPECT_EQ(c.both[1].name, "redis/XADD");
    EXPECT_NEAR(*c.both[1].change_pct, -25.0, 1e-9);  // faster
    EXPECT_DOUBLE_EQ(*c.both[1].old_ratio, 1.1);
    EXPECT_DOUBLE_EQ(*c.both[1].new_ratio, 0.9);
    EXPECT_EQ(c.only_old, std::vector<std::string>{"gone"});
    EXPECT_EQ(c.only_new, std::vector<std::string>{"fresh"});
}

TEST(BenchCompareTest, converts_the_old_time_to_the_new_unit) {
    const BenchComparison c = compare_benchmarks({fig("x", 30000, "ns")}, {fig("x", 15, "us")});
    ASSERT_EQ(c.both.size(), 1u);
    EXPECT_DOUBLE_EQ(c.both[0].old_time, 30);
    EXPECT_EQ(c.both[0].time_unit, "us");
    EXPECT_NEAR(*c.both[0].change_pct, -50.0, 1e-9);
    EXPECT_DOUBLE_EQ(to_unit(2, "s", "ms"), 2000);
    EXPECT_THROW(to_unit(1, "fortnight", "s"), std::runtime_error);
}

TEST(BenchCompareTest, a_zero_old_time_has_no_change_and_the_table_says_so) {
    const BenchComparison c = compare_benchmarks({fig("x", 0)}, {fig("x", 5)});
    EXPECT_FALSE(c.both[0].change_pct.has_value());
    const std::string text = compare_table(c);
    EXPECT_NE(text.find("x  "), std::string::npos) << text;
    EXPECT_NE(text.find("5.000 us"), std::string::npos) << text;
    EXPECT_NE(text.find(" -"), std::string::npos) << text;
}

TEST(BenchCompareTest, the_table_shows_signed_percentages_and_the_unpaired_names) {
    const std::string text =
        compare_table(compare_benchmarks({fig("a", 10), fig("old-only", 1)}, {fig("a", 12.5), fig("new-only", 1)}));
    EXPECT_NE(text.find("+25.0%"), std::string::npos) << text;
    EXPECT_NE(text.find("only in the old file: old-only"), std::string::npos) << text;
    EXPECT_NE(text.find("only in the new run: new-only"), std::string::npos) << text;
}

}  // namespace bench_compare_test
}  // namespace relab
