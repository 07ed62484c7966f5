#include <sstream>

#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report_fixture.h"

namespace relab {
namespace {

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
        "| lab | title | documented | measured (wrong/trials) | expectation | result |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| `08a-baseline` | BUG: 2 parallel consumers; plain UPDATE | 10/10 — wrong 10/10; created overwrites at 816 ms "
        "| 2/2 | wrong = all | ✅ held |\n"
        "| `08c-s4a` | S4a: 2 consumers + lock per key | the late release returns 0 | 2/3 | wrong &gt;= 1 | ✅ held |\n"
        "| `08f-p2` | P2 right: CAS with the BUSINESS version | 0/5 — wrong 0/5 | 0/1 | wrong = none | ✅ held |\n"
        "| `08g-p1-naive` | P1 wrong: naive dispatcher | — | 1/2 | wrong &gt;= 1 | ✅ held |\n"
        "| `08d-cas-overlap` | CAS when 2 UPDATEs OVERLAP | B fails 'could not serialize access due to concurrent "
        "update' | 1/2 cases | wrong = none | ❌ **BROKEN** |\n"
        "| `08h-idmp` | XADD IDMP producer idempotency | — | — | wrong = none | ⏭️ skipped: XADD IDMP needs Redis 8.6; "
        "this server is 7.0.15 |\n"
        "\n"
        "### Broken expectations\n"
        "\n"
        "- `08d-cas-overlap`: 1 of 2 cases ended with wrong rows (expected none)\n";
    EXPECT_EQ(render(test::sample_run()), expected);
}

TEST(MarkdownReporterTest, table_syntax_and_markup_in_cells_is_escaped) {
    LabResult lab = test::baseline_lab();
    lab.scenario.title = "a | b <token> & *bold* `code` [link]\nsecond line";
    lab.scenario.documented = Documented{"UPDATE ... WHERE version < 2 | x_y", "", std::nullopt, std::nullopt};
    RunReport run;
    run.labs = {lab};
    const std::string md = render(run);
    EXPECT_NE(md.find("| `08a-baseline` | a \\| b &lt;token&gt; &amp; \\*bold\\* \\`code\\` \\[link\\] second line | "
                      "UPDATE ... WHERE version &lt; 2 \\| x\\_y | 2/2 |"),
              std::string::npos)
        << md;
    EXPECT_EQ(md.find("<token>"), std::string::npos);
    // Still one header row, one rule and one row: no cell broke the table.
    size_t rows = 0;
    std::istringstream in(md);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("| ", 0) == 0) ++rows;
    EXPECT_EQ(rows, 3u);
}

TEST(MarkdownReporterTest, an_all_held_run_has_no_broken_section) {
    RunReport run;
    run.labs = {test::baseline_lab()};
    const std::string md = render(run);
    EXPECT_EQ(md.rfind("## relab: 1 lab — 1 held, 0 broken, 0 skipped\n\n| lab |", 0), 0u) << md;
    EXPECT_EQ(md.find("Broken"), std::string::npos);
}

}  // namespace
}  // namespace relab
