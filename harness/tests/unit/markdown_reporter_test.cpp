#include <sstream>

#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report_fixture.h"

namespace relab {
namespace markdown_reporter_test {

std::string render(const RunReport& run) {
    std::ostringstream out;
    make_markdown_reporter()->report(run, out);
    return out.str();
}

TEST(MarkdownReporterTest, one_row_per_lab_with_documented_beside_measured) {
    const std::string expected =
        "## relab: 6 labs — 4 held, 1 broken, 1 skipped\n"
        "\n"
        "Redis 7.0.15 · PostgreSQL 15.8 (external) · relab `631b39ae6c30` · started 2026-11-29T20:52:59Z\n"
        "\n"
        "| lab | backend | title | documented (relab's summary) | measured (wrong/trials) | expectation | result |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        "| `08a-baseline` | real | BUG: 2 parallel consumers; plain UPDATE | 10/10 — wrong 10/10; created overwrites at 816 ms "
        "| 2/2 | wrong = all | ✅ held |\n"
        "| `08c-s4a` | real | S4a: 2 consumers + lock per key | the late release returns 0 | 2/3 | wrong &gt;= 1 | ✅ held |\n"
        "| `08f-p2` | real | P2 right: CAS with the BUSINESS version | 0/5 — wrong 0/5 | 0/1 | wrong = none | ✅ held |\n"
        "| `08g-p1-naive` | real | P1 wrong: naive dispatcher | — | 1/2 | wrong &gt;= 1 | ✅ held |\n"
        "| `08d-cas-overlap` | real | CAS when 2 UPDATEs OVERLAP | B fails 'could not serialize access due to concurrent "
        "update' | 1/2 cases | wrong = none | ❌ **BROKEN** |\n"
        "| `08h-idmp` | real | XADD IDMP producer idempotency | — | — | wrong = none | ⏭️ skipped: XADD IDMP needs Redis 8.6; "
        "this server is 7.0.15 |\n"
        "\n"
        "### Broken expectations\n"
        "\n"
        "- `08d-cas-overlap`: 1 of 2 cases ended with wrong rows (expected none)\n"
        "\n"
        "### Accounting: every published entry followed to its jobs\n"
        "\n"
        "| lab | trials | published | processed once | duplicated | lost | redelivered after ack | unexpected | stale "
        "overwrites | more |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
        "| `08a-baseline` | 2 | 4 | 4 | 0 | 0 | 0 | 0 | **2** |  |\n"
        "| `08c-s4a` | 3 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |  |\n"
        "| `08f-p2` | 1 | 2 | 2 | 0 | 0 | 0 | 0 | 0 | 1 unapplied |\n"
        "| `08g-p1-naive` | 2 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |  |\n"
        "\n"
        "### The articles' words, beside relab's\n"
        "\n"
        "- `08a-baseline`: the article (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §2): “10/10 lần đơn #42 kết thúc ở created.”\n"
        "  - relab's summary: wrong 10/10; created overwrites at 816 ms\n"
        "- `08c-s4a`: the article (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §3, S4c): “DELEX … IFEQ trả 0”\n"
        "  - relab's summary: the late release returns 0\n"
        "  - the article also (“Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off”, §3, S4): “lock là mutual exclusion (loại trừ lẫn nhau), không phải ordering (sắp thứ "
        "tự).”\n"
        "    - relab's note: lock-fifo puts a per-key FIFO behind the lock\n";
    EXPECT_EQ(render(test::sample_run()), expected);
}

// The article's throughput figure in the table of figures measured beside the article's.
TEST(MarkdownReporterTest, the_articles_throughput_figure_is_a_row_beside_the_measured_one) {
    RunReport run;
    run.labs = {test::s1_throughput_lab()};
    const std::string md = render(run);
    EXPECT_NE(md.find("| `08b-s1` | throughput, median of 2 trial(s) | 2.35 jobs/s | 1.25 events/s (§2): “một consumer đơn "
                      "chỉ đạt tối đa ~1,25 event/giây” | 800 ms jobs |\n"),
              std::string::npos)
        << md;
}

TEST(MarkdownReporterTest, a_lab_run_beside_another_arrangement_shows_both_throughputs_and_the_ratio) {
    RunReport run;
    run.labs = {test::s2_beside_s1_lab(), test::baseline_lab()};
    const std::string md = render(run);
    EXPECT_NE(md.find("### Throughput beside another arrangement, in the same run\n\n- `s2-s1-same-workload`: "
                      "throughput 30.00 jobs/s (median of 2 trial(s)); beside it, S1 on the same workload in the same "
                      "run: 10.00 jobs/s (median of 2 trial(s)); this lab's is 3.00x it\n"),
              std::string::npos)
        << md;
    EXPECT_EQ(md.find("`08a-baseline`: throughput"), std::string::npos) << "a lab with nothing beside it has no line";
}

TEST(MarkdownReporterTest, table_syntax_and_markup_in_cells_is_escaped) {
    LabResult lab = test::baseline_lab();
    lab.scenario.title = "a | b <token> & *bold* `code` [link]\nsecond line";
    lab.scenario.documented = Documented{"UPDATE ... WHERE version < 2 | x_y", "", std::nullopt, std::nullopt, "", ""};
    RunReport run;
    run.labs = {lab};
    const std::string md = render(run);
    EXPECT_NE(md.find("| `08a-baseline` | real | a \\| b &lt;token&gt; &amp; \\*bold\\* \\`code\\` \\[link\\] second line | "
                      "UPDATE ... WHERE version &lt; 2 \\| x\\_y | 2/2 |"),
              std::string::npos)
        << md;
    EXPECT_EQ(md.find("<token>"), std::string::npos);
    // Still one header row, one rule and one row: no cell broke the table (the sections below have
    // their own tables).
    size_t rows = 0;
    std::istringstream in(md.substr(0, md.find("\n### ")));
    for (std::string line; std::getline(in, line);)
        if (line.rfind("| ", 0) == 0) ++rows;
    EXPECT_EQ(rows, 3u);
}

TEST(MarkdownReporterTest, simulated_labs_show_their_wrong_rate_failing_seeds_and_the_replay_command) {
    const std::string md = render(test::sim_and_idem_run());
    // The row: the backend, and the rate with its interval beside the count.
    EXPECT_NE(md.find("| `08c-s4a` | sim | S4a: 2 consumers + lock per key | the late release returns 0 | 30/150 (20.0%, 95% "
                      "CI 14.4–27.1%) | wrong &gt;= 1 | ✅ held |\n"),
              std::string::npos)
        << md;
    // A lab the simulator does not run is skipped, with its reason, and is not broken.
    EXPECT_NE(md.find("| `08d-cas-overlap` | sim | CAS when 2 UPDATEs OVERLAP | B fails 'could not serialize access due to "
                      "concurrent update' | — | wrong = none | ⏭️ skipped: scripted sessions run on the real backend only "
                      "(the simulator runs workload labs) |\n"),
              std::string::npos)
        << md;
    EXPECT_EQ(md.rfind("## relab: 4 labs — 2 held, 1 broken, 1 skipped\n", 0), 0u);
    EXPECT_NE(md.find("\n### Simulated labs\n\n"
                      "| lab | wrong rate (95% CI) | first failing seeds | replay the first |\n"
                      "| --- | --- | --- | --- |\n"
                      "| `08c-s4a` | 20.0% (95% CI 14.4–27.1%) over 150 trials | `0x5eed000000000005`, `0x5eed00000000000a`, "
                      "`0x5eed00000000000f`, `0x5eed000000000014`, `0x5eed000000000019` | `relab run 08c-s4a --backend sim "
                      "--replay 0x5eed000000000005` |\n"),
              std::string::npos)
        << md;
    // The skipped simulated lab has no rate to show.
    EXPECT_EQ(md.find("| `08d-cas-overlap` | 0.0%"), std::string::npos);
}

TEST(MarkdownReporterTest, a_replayed_seed_is_named_instead_of_a_rate) {
    LabResult lab = test::sim_lab();
    lab.trials = {lab.trials[4]};  // trial 5, wrong
    lab.wrong = lab.total = 1;
    lab.replay_seed = lab.trials[0].seed;
    lab.failing_seeds = {lab.trials[0].seed};
    RunReport run;
    run.labs = {lab};
    const std::string md = render(run);
    EXPECT_NE(md.find("| `08c-s4a` | sim | S4a: 2 consumers + lock per key | the late release returns 0 | 1/1 |"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| `08c-s4a` | replay of trial seed 0x5eed000000000005 | `0x5eed000000000005` | `relab run 08c-s4a "
                      "--backend sim --replay 0x5eed000000000005` |\n"),
              std::string::npos)
        << md;
}

TEST(MarkdownReporterTest, idempotency_labs_show_their_counts_and_the_figures_beside_the_article) {
    const std::string md = render(test::sim_and_idem_run());
    // The row says what the trials left: orders, duplicates and leaks over both trials.
    EXPECT_NE(md.find("| `idem-key-hash-in-key` | real | Key design, wrong: the hash in the key name | the business logic "
                      "runs twice: a silent duplicate order | 1/2: 3 orders, 1 duplicate, 1 leak | wrong &gt;= 1 | ✅ held |\n"),
              std::string::npos)
        << md;
    // Every count, summed over the trials; duplicates and leaks in bold when there are any.
    EXPECT_NE(md.find("\n### Idempotency labs: orders and answers\n\n"
                      "| lab | trials | orders | duplicates | 201 | replays | 409 | 422 | layer 4 | 5xx | leaks | sends |\n"
                      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
                      "| `idem-key-hash-in-key` | 2 | 3 | **1** | 3 | 1 | 1 | 0 | 0 | 0 | **1** | 6 |\n"),
              std::string::npos)
        << md;
    // The session lab has no counts row: it ran no clients.
    EXPECT_EQ(md.find("| `idem-memory` | 1 |"), std::string::npos);
    // A measurement with the article's figure and the reason; one without the article's figure is
    // left out; a scripted step's documented reply with its note, and its projection to 10,000 keys.
    EXPECT_NE(md.find("\n### Measured here, beside the article\n\n"
                      "| lab | figure | measured here | article | why they differ |\n"
                      "| --- | --- | --- | --- | --- |\n"
                      "| `idem-key-hash-in-key` | evicted\\_keys after the flood (allkeys-lru) | 6,300 | 72,232 (the "
                      "article's flood) | the count follows the flood's size: relab writes 8 MB into 3 MB |\n"
                      "| `idem-memory` | MEMORY USAGE idem:v1:7:k1 | (integer) 200 | 192 (Redis 8.8) | Redis 7.0 allocates "
                      "the key, the value and the expiry separately |\n"
                      "| `idem-memory` | MEMORY USAGE idem:v1:7:k1 × 10,000 (10,000 orders/day) | 2.0 MB | ≈ 2 MB | — |\n"),
              std::string::npos)
        << md;
    EXPECT_EQ(md.find("OOM errors"), std::string::npos);
    EXPECT_NE(md.find("- `idem-memory`: 1 of 1 cases had a step with another reply (expected none)\n"), std::string::npos);
}

TEST(MarkdownReporterTest, an_all_held_run_has_no_broken_section) {
    RunReport run;
    run.labs = {test::baseline_lab()};
    const std::string md = render(run);
    EXPECT_EQ(md.rfind("## relab: 1 lab — 1 held, 0 broken, 0 skipped\n\n| lab | backend |", 0), 0u) << md;
    EXPECT_EQ(md.find("Broken"), std::string::npos);
    // Nor sections for simulated or idempotency labs it does not have: only its accounting.
    EXPECT_EQ(md.find("### Simulated"), std::string::npos);
    EXPECT_EQ(md.find("### Idempotency"), std::string::npos);
    EXPECT_NE(md.find("\n### Accounting: every published entry followed to its jobs\n"), std::string::npos);
    EXPECT_NE(md.find("| `08a-baseline` | 2 | 4 | 4 | 0 | 0 | 0 | 0 | **2** |  |\n"), std::string::npos) << md;
}

}  // namespace markdown_reporter_test
}  // namespace relab
