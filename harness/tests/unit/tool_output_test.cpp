// Reading the outside tools' output: redis-benchmark's figures (relab's client is compared with
// them) and pgbench's tps (the idem-bench lab's).
#include <gtest/gtest.h>

#include "tool_output/pgbench_output.h"
#include "tool_output/redis_benchmark_output.h"

namespace relab {
namespace tool_output_test {

// Redis 7's header row: the test name, then the rate and six latencies.
const std::string kRedis7Header =
    "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\","
    "\"p99_latency_ms\",\"max_latency_ms\"\n";

TEST(RedisBenchmarkOutputTest, reads_redis_7_csv_rows_with_their_percentiles) {
    const std::string out =
        kRedis7Header +
        "\"XADD bench:s * f v\",\"26666.67\",\"0.036\",\"0.008\",\"0.023\",\"0.031\",\"0.047\",\"7.031\"\n";
    const auto row = parse_redis_benchmark_row(out);
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->test, "XADD bench:s * f v");
    EXPECT_DOUBLE_EQ(row->rps, 26666.67);
    EXPECT_DOUBLE_EQ(*row->avg_ms, 0.036);
    EXPECT_DOUBLE_EQ(*row->min_ms, 0.008);
    EXPECT_DOUBLE_EQ(*row->p50_ms, 0.023);
    EXPECT_DOUBLE_EQ(*row->p95_ms, 0.031);
    EXPECT_DOUBLE_EQ(*row->p99_ms, 0.047);
    EXPECT_DOUBLE_EQ(*row->max_ms, 7.031);
    EXPECT_NEAR(row->us_per_request(), 37.5, 1e-3);
}

TEST(RedisBenchmarkOutputTest, keeps_a_command_with_quotes_commas_and_numbers_whole) {
    const std::string out =
        "\"XREADGROUP GROUP g c COUNT 1 STREAMS s >\",\"14925.37\",\"0.064\",\"0.016\",\"0.023\",\"0.023\",\"1.535\","
        "\"8.295\"\n"
        "\"SET \"k\",\"1\" v NX GET\",\"100.5\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\"\n";
    EXPECT_EQ(parse_redis_benchmark_row(out)->test, "XREADGROUP GROUP g c COUNT 1 STREAMS s >");
    const auto quoted = parse_redis_benchmark_row("\"SET \"k\",\"1\" v NX GET\",\"100.5\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\"");
    ASSERT_TRUE(quoted.has_value());
    EXPECT_EQ(quoted->test, "SET \"k\",\"1\" v NX GET");
    EXPECT_DOUBLE_EQ(quoted->rps, 100.5);
    EXPECT_DOUBLE_EQ(*quoted->max_ms, 6);
    // idem-bench's claim, a JSON value in the command, under Redis 7's header.
    const auto claim = parse_redis_benchmark_row(
        kRedis7Header +
        "\"SET x:rb:__rand_int__ {\"status\":\"in_progress\"} NX GET EX 60\",\"45454.55\",\"0.022\",\"0.008\",\"0.023\","
        "\"0.023\",\"0.039\",\"4.647\"\n");
    ASSERT_TRUE(claim.has_value());
    EXPECT_EQ(claim->test, "SET x:rb:__rand_int__ {\"status\":\"in_progress\"} NX GET EX 60");
    EXPECT_DOUBLE_EQ(claim->rps, 45454.55);
    EXPECT_DOUBLE_EQ(*claim->p99_ms, 0.039);
}

TEST(RedisBenchmarkOutputTest, reads_redis_6_rows_without_percentiles_and_skips_progress_lines) {
    const std::string out =
        "PING_MBULK: rps=0.0 (overall: -nan) avg_msec=-nan (overall: -nan)\r"
        "\"PING_MBULK\",\"18181.82\"\r\n";
    const auto row = parse_redis_benchmark_row(out);
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->test, "PING_MBULK");
    EXPECT_DOUBLE_EQ(row->rps, 18181.82);
    EXPECT_FALSE(row->p50_ms.has_value());
    EXPECT_FALSE(row->p99_ms.has_value());
}

TEST(RedisBenchmarkOutputTest, refuses_a_header_alone_a_zero_rate_or_odd_field_counts) {
    EXPECT_FALSE(parse_redis_benchmark_row("").has_value());
    EXPECT_FALSE(parse_redis_benchmark_row("no figures").has_value());
    EXPECT_FALSE(parse_redis_benchmark_row("\"test\",\"rps\",\"avg_latency_ms\"\n").has_value());
    EXPECT_FALSE(parse_redis_benchmark_row("\"PING\",\"0.00\"\n").has_value());
    EXPECT_FALSE(parse_redis_benchmark_row("\"PING\",\"1\",\"2\",\"3\"\n").has_value());
    EXPECT_FALSE(parse_redis_benchmark_row("Could not connect to Redis at 127.0.0.1:1: Connection refused\n").has_value());
}

TEST(RedisBenchmarkOutputTest, reads_the_version_line) {
    EXPECT_EQ(parse_redis_benchmark_version("redis-benchmark 7.0.15\n"), "7.0.15");
    EXPECT_EQ(parse_redis_benchmark_version("redis-benchmark 6.0.16 (git:6f1c5d5d)\n"), "6.0.16");
    EXPECT_FALSE(parse_redis_benchmark_version("command not found").has_value());
}

TEST(PgbenchOutputTest, reads_the_tps_of_the_summary) {
    EXPECT_DOUBLE_EQ(*parse_pgbench_tps("latency average = 5.5 ms\ntps = 181.234567 (without initial connection time)\n"),
                     181.234567);
    EXPECT_FALSE(parse_pgbench_tps("connection refused").has_value());
}

}  // namespace tool_output_test
}  // namespace relab
