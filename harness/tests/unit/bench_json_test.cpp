// The shape of `relab bench --json`: google/benchmark's fields, relab's beside them, and a file
// read back for --compare.
#include <gtest/gtest.h>

#include "bench/bench_json.h"
#include "bench/bench_text.h"

namespace relab {

namespace bench_json_test {

BenchFigure round_trip() {
    BenchFigure f;
    f.name = "redis/XADD";
    f.iterations = 20000;
    f.real_time = 41.5;
    f.ratio = 41.5 / 38.0;
    f.ratio_of = "relab_us / redis_benchmark_us";
    f.target = 1.2;
    f.label = "relab 41.5 µs/op, redis-benchmark 38.0 µs/op";
    f.measured = "XADD, one call at a time.";
    f.raw = {{"relab_us", 41.5}, {"redis_benchmark_us", 38.0}, {"name", "must not replace the name"}};
    return f;
}

BenchFigure sim_figure() {
    BenchFigure f;
    f.name = "sim/08a-baseline/jobs:2";
    f.iterations = 10001;
    f.real_time = 12.5;
    f.items_per_second = 80000;
    f.target = 100000;
    f.target_kind = TargetKind::at_least;
    f.target_of = "items_per_second";
    return f;
}

TEST(BenchJsonTest, has_googles_context_and_benchmark_fields_and_relabs_beside_them) {
    BenchContext c;
    c.date = "2026-05-02T14:03:11+00:00";
    c.host_name = "dev";
    c.num_cpus = 2;
    c.jobs = 2;
    c.relab_commit = "abc123";
    c.redis_version = "7.0.15";
    const nlohmann::json j = bench_json(c, {round_trip(), sim_figure()});
    const auto& ctx = j.at("context");
    EXPECT_EQ(ctx.at("date"), "2026-05-02T14:03:11+00:00");
    EXPECT_EQ(ctx.at("host_name"), "dev");
    EXPECT_EQ(ctx.at("num_cpus"), 2);
    EXPECT_EQ(ctx.at("redis_version"), "7.0.15");
    EXPECT_EQ(ctx.at("relab_commit"), "abc123");
    EXPECT_FALSE(ctx.contains("redis_benchmark_version"));  // not measured, not invented

    ASSERT_EQ(j.at("benchmarks").size(), 2u);
    const auto& b = j.at("benchmarks")[0];
    EXPECT_EQ(b.at("name"), "redis/XADD");
    EXPECT_EQ(b.at("run_type"), "iteration");
    EXPECT_EQ(b.at("iterations"), 20000);
    EXPECT_DOUBLE_EQ(b.at("real_time").get<double>(), 41.5);
    EXPECT_EQ(b.at("time_unit"), "us");
    EXPECT_NEAR(b.at("ratio").get<double>(), 41.5 / 38.0, 1e-12);
    EXPECT_DOUBLE_EQ(b.at("target").get<double>(), 1.2);
    EXPECT_EQ(b.at("target_kind"), "at_most");
    EXPECT_EQ(b.at("target_of"), "ratio");
    EXPECT_EQ(b.at("met"), true);
    EXPECT_DOUBLE_EQ(b.at("redis_benchmark_us").get<double>(), 38.0);  // a raw figure, at the top level
    EXPECT_EQ(b.at("label"), "relab 41.5 µs/op, redis-benchmark 38.0 µs/op");

    const auto& s = j.at("benchmarks")[1];
    EXPECT_TRUE(s.at("ratio").is_null());  // meant to be there, not computed
    EXPECT_EQ(s.at("met"), false);
    EXPECT_EQ(s.at("target_of"), "items_per_second");
    EXPECT_DOUBLE_EQ(s.at("items_per_second").get<double>(), 80000);
}

TEST(BenchJsonTest, a_written_file_reads_back_for_compare) {
    const nlohmann::json j = bench_json(BenchContext{}, {round_trip(), sim_figure()});
    const std::vector<BenchFigure> back = figures_from_json(nlohmann::json::parse(j.dump()));
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].name, "redis/XADD");
    EXPECT_DOUBLE_EQ(back[0].real_time, 41.5);
    EXPECT_EQ(back[0].met(), true);
    EXPECT_EQ(back[1].target_kind, TargetKind::at_least);
    EXPECT_EQ(back[1].met(), false);
}

TEST(BenchJsonTest, reads_a_google_benchmark_file_and_refuses_other_json) {
    const auto g = nlohmann::json::parse(R"({"context": {"num_cpus": 8}, "benchmarks": [
        {"name": "BM_x", "iterations": 1000, "real_time": 1234.5, "cpu_time": 1200, "time_unit": "ns"}]})");
    const auto figures = figures_from_json(g);
    ASSERT_EQ(figures.size(), 1u);
    EXPECT_EQ(figures[0].time_unit, "ns");
    EXPECT_FALSE(figures[0].ratio.has_value());
    EXPECT_THROW(figures_from_json(nlohmann::json::parse(R"({"labs": []})")), std::runtime_error);
    EXPECT_THROW(figures_from_json(nlohmann::json::parse(R"({"benchmarks": [{"name": "x"}]})")), std::runtime_error);
}

TEST(BenchJsonTest, the_table_has_a_row_per_figure_with_ratio_target_and_met) {
    const std::string text = bench_table({round_trip(), sim_figure()});
    EXPECT_NE(text.find("name"), std::string::npos);
    EXPECT_NE(text.find("redis/XADD"), std::string::npos);
    EXPECT_NE(text.find("1.09×"), std::string::npos) << text;
    EXPECT_NE(text.find("≤ 1.2×"), std::string::npos) << text;
    EXPECT_NE(text.find("≥ 100000 /s"), std::string::npos) << text;
    EXPECT_NE(text.find("yes"), std::string::npos);
    EXPECT_NE(text.find("NO"), std::string::npos);
    EXPECT_NE(text.find("redis/XADD: XADD, one call at a time. Ratio = relab_us / redis_benchmark_us."),
              std::string::npos)
        << text;
}

}  // namespace bench_json_test
}  // namespace relab
