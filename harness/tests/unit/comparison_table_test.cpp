#include <gtest/gtest.h>

#include <sstream>

#include "report/comparison_table.h"
#include "scenario/scenario.h"

namespace relab::comparison_table_test {

// A lab of `planned` trials whose trial k is wrong when wrong(k), plus `extra` until_wrong trials.
LabResult lab_of(const std::string& id, const std::string& row, int planned, int extra, bool (*wrong)(int)) {
    LabResult lab;
    lab.scenario.id = id;
    lab.scenario.compare = Comparison{"s4a-by-language", row, std::nullopt};
    lab.planned_trials = planned;
    for (int k = 1; k <= planned + extra; ++k) {
        TrialOutcome t;
        t.trial = k;
        t.wrong = wrong(k);
        lab.wrong += t.wrong ? 1 : 0;
        lab.trials.push_back(t);
    }
    lab.total = planned + extra;
    return lab;
}

TEST(ComparisonTableTest, rows_count_planned_trials_only_after_the_article_row) {
    LabResult cpp = lab_of("08c-s4a", "C++", 60, 0, [](int k) { return k % 6 == 0; });  // 10/60
    cpp.scenario.compare->article = ComparisonArticleRow{"the article", 15, 60};
    // 0 wrong in 60, then until_wrong ran 5 more and the 65th was wrong: the row says 0/60.
    LabResult php = lab_of("php-s4a", "PHP", 60, 5, [](int k) { return k == 65; });
    LabResult mutant = lab_of("08c-s4a", "C++", 60, 0, [](int) { return true; });
    mutant.scenario.mutant = "no-lock";
    LabResult other = lab_of("x", "alone", 10, 0, [](int) { return false; });
    other.scenario.compare->table = "alone";

    const auto tables = comparison_tables({cpp, mutant, php, other});
    ASSERT_EQ(tables.size(), 1u);  // "alone" has one row: not a comparison
    const auto& rows = tables[0].rows;
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].label, "the article");
    EXPECT_TRUE(rows[0].lab.empty());
    EXPECT_EQ(rows[0].wrong, 15);
    EXPECT_EQ(rows[1].lab, "08c-s4a");
    EXPECT_EQ(rows[1].wrong, 10);
    EXPECT_EQ(rows[1].trials, 60);
    EXPECT_EQ(rows[2].lab, "php-s4a");
    EXPECT_EQ(rows[2].wrong, 0);
    EXPECT_EQ(rows[2].trials, 60);
    EXPECT_DOUBLE_EQ(rows[2].low, 0);
    EXPECT_NEAR(rows[1].low, 0.0929, 1e-3);

    std::ostringstream text;
    write_comparison_table(tables[0], text);
    EXPECT_NE(text.str().find("10/60"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("15/60"), std::string::npos) << text.str();
    EXPECT_EQ(comparison_table_json(tables[0])["rows"][2]["trials"], 60);
}

}  // namespace relab::comparison_table_test
