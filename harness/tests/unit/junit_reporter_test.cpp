#include <sstream>

#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report_fixture.h"
#include "xml_tree.h"

namespace relab {
namespace junit_reporter_test {

using test::XmlElement;

std::string render(const RunReport& run) {
    std::ostringstream out;
    make_junit_reporter()->report(run, out);
    return out.str();
}

const XmlElement* child(const XmlElement& e, const std::string& name) {
    for (const auto& c : e.children)
        if (c.name == name) return &c;
    return nullptr;
}

TEST(JunitReporterTest, one_testsuite_whose_counts_match_its_testcases) {
    const std::string xml = render(test::sample_run());
    EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"relab\" tests=\"6\" failures=\"1\" "
                        "errors=\"0\" skipped=\"1\" time=\"2.500\">\n  <testsuite name=\"relab\" tests=\"6\" failures=\"1\" "
                        "errors=\"0\" skipped=\"1\" time=\"2.500\" timestamp=\"2026-11-29T20:52:59Z\">\n",
                        0),
              0u)
        << xml;
    const XmlElement root = test::parse_xml(xml);
    ASSERT_EQ(root.name, "testsuites");
    ASSERT_EQ(root.all("testsuite").size(), 1u);
    const XmlElement& suite = *root.all("testsuite")[0];
    // The fixture: six labs, the session lab broken, the IDMP lab skipped.
    const auto cases = suite.all("testcase");
    ASSERT_EQ(cases.size(), 6u);
    int failures = 0, skipped = 0;
    for (const auto* c : cases) {
        failures += child(*c, "failure") != nullptr;
        skipped += child(*c, "skipped") != nullptr;
    }
    EXPECT_EQ(failures, 1);
    EXPECT_EQ(skipped, 1);
    EXPECT_EQ(suite.attr("tests"), "6");
    EXPECT_EQ(suite.attr("failures"), "1");
    EXPECT_EQ(suite.attr("skipped"), "1");
    EXPECT_EQ(root.attr("tests"), "6");
    EXPECT_EQ(root.attr("failures"), "1");

    std::vector<std::pair<std::string, std::string>> names;
    for (const auto* c : cases) names.emplace_back(c->attr("classname"), c->attr("name"));
    EXPECT_EQ(names, (std::vector<std::pair<std::string, std::string>>{{"08a-baseline", "08a-baseline"},
                                                                        {"08c-lock", "08c-s4a"},
                                                                        {"08f-p2", "08f-p2"},
                                                                        {"08g-outbox", "08g-p1-naive"},
                                                                        {"08d-cas", "08d-cas-overlap"},
                                                                        {"08h-idmp", "08h-idmp"}}));
    EXPECT_EQ(cases[0]->attr("time"), "2.500");
    const auto props = suite.all("property");
    ASSERT_EQ(props.size(), 4u);
    EXPECT_EQ(props[0]->attr("name"), "relab_commit");
    EXPECT_EQ(props[0]->attr("value"), "631b39ae6c30");
}

TEST(JunitReporterTest, a_broken_lab_is_a_failure_carrying_its_text_report) {
    const RunReport run = test::sample_run();
    const XmlElement root = test::parse_xml(render(run));
    const auto cases = root.all("testcase");
    const XmlElement* failure = child(*cases[4], "failure");
    ASSERT_NE(failure, nullptr);
    EXPECT_EQ(failure->attr("message"),
              "expectation wrong = none broke: 1 of 2 cases ended with wrong rows (expected none)");
    // The lab's text report, as written here, not as the reporter's own helper would make it.
    EXPECT_EQ(failure->text.rfind("### CAS when 2 UPDATEs OVERLAP   (08d-cas.txt)\n", 0), 0u) << failure->text;
    EXPECT_NE(failure->text.find("UPDATE tmp_orders SET status = 'created', version = 1 WHERE id = 42 AND version < 1;\n"
                                 "UPDATE 1\n  ✕ expected UPDATE 0, got UPDATE 1\n"),
              std::string::npos);
    EXPECT_NE(failure->text.find("  expectation: wrong = none → BROKEN\n    ✕ 1 of 2 cases ended with wrong rows "
                                 "(expected none)\n"),
              std::string::npos)
        << failure->text;
    const std::vector<std::string> first_lines = {"### BUG: 2 parallel consumers; plain UPDATE   (08a-baseline.txt)\n",
                                                  "### S4a: 2 consumers + lock per key   (08c-lock.txt)\n",
                                                  "### P2 right: CAS with the BUSINESS version   (08f-p2.txt)\n",
                                                  "### P1 wrong: naive dispatcher   (08g-outbox.txt)\n"};
    for (size_t i : {0u, 1u, 2u, 3u}) {
        EXPECT_EQ(child(*cases[i], "failure"), nullptr) << i;
        ASSERT_NE(child(*cases[i], "system-out"), nullptr) << i;
        const std::string& out = child(*cases[i], "system-out")->text;
        EXPECT_EQ(out.rfind(first_lines[i], 0), 0u) << out;
        EXPECT_NE(out.find("  expectation: "), std::string::npos) << out;
        EXPECT_NE(out.find(" → held\n"), std::string::npos) << out;
    }
}

TEST(JunitReporterTest, a_skipped_lab_is_a_skip_with_its_reason) {
    const std::string xml = render(test::sample_run());
    EXPECT_NE(xml.find("    <testcase classname=\"08h-idmp\" name=\"08h-idmp\" time=\"0.000\">\n      <skipped "
                       "message=\"XADD IDMP needs Redis 8.6; this server is 7.0.15\"/>\n    </testcase>\n"),
              std::string::npos)
        << xml;
}

TEST(JunitReporterTest, markup_control_characters_and_newlines_survive_as_well_formed_xml) {
    LabResult lab = test::session_lab();
    lab.scenario.id = "q\"<&>'";
    lab.scenario.output = "o&o";
    lab.failures = {"first line\nsecond <line> & \"quotes\"\x01"};
    lab.cases[1].failures.push_back("bell \x07 rang");
    RunReport run;
    run.labs = {lab};
    const std::string xml = render(run);
    const XmlElement root = test::parse_xml(xml);
    const auto cases = root.all("testcase");
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0]->attr("name"), "q\"<&>'");
    EXPECT_EQ(cases[0]->attr("classname"), "o&o");
    const XmlElement* failure = child(*cases[0], "failure");
    ASSERT_NE(failure, nullptr);
    // Newlines in attributes are kept as references; control characters XML cannot hold are dropped.
    EXPECT_EQ(failure->attr("message"), "expectation wrong = none broke: first line\nsecond <line> & \"quotes\"");
    EXPECT_NE(failure->text.find("bell  rang"), std::string::npos);
}

TEST(JunitReporterTest, simulated_labs_are_a_class_of_their_own_and_a_lab_the_simulator_skips_is_a_skip) {
    const RunReport run = test::sim_and_idem_run();
    const XmlElement root = test::parse_xml(render(run));
    const XmlElement& suite = *root.all("testsuite")[0];
    EXPECT_EQ(suite.attr("tests"), "4");
    EXPECT_EQ(suite.attr("failures"), "1");  // idem-memory
    EXPECT_EQ(suite.attr("skipped"), "1");   // the session lab on the simulator
    const auto cases = suite.all("testcase");
    ASSERT_EQ(cases.size(), 4u);
    std::vector<std::pair<std::string, std::string>> names;
    for (const auto* c : cases) names.emplace_back(c->attr("classname"), c->attr("name"));
    EXPECT_EQ(names, (std::vector<std::pair<std::string, std::string>>{{"sim.08c-lock", "08c-s4a"},
                                                                        {"sim.08d-cas", "08d-cas-overlap"},
                                                                        {"idem-keys", "idem-key-hash-in-key"},
                                                                        {"idem-memory", "idem-memory"}}));
    const XmlElement* skipped = child(*cases[1], "skipped");
    ASSERT_NE(skipped, nullptr);
    EXPECT_EQ(skipped->attr("message"), "scripted sessions run on the real backend only (the simulator runs workload labs)");
    EXPECT_EQ(child(*cases[1], "failure"), nullptr);
    // A held simulated lab passes with its text report: the rate and the seeds to replay.
    const XmlElement* out = child(*cases[0], "system-out");
    ASSERT_NE(out, nullptr);
    EXPECT_NE(out->text.find("wrong rate 20.0% (95% CI 14.4–27.1%) over 150 trials; failing seeds: 0x5eed000000000005, "),
              std::string::npos)
        << out->text;
    // The broken Redis lab fails with its transcript.
    const XmlElement* failure = child(*cases[3], "failure");
    ASSERT_NE(failure, nullptr);
    EXPECT_EQ(failure->attr("message"), "expectation wrong = none broke: 1 of 1 cases had a step with another reply (expected none)");
    EXPECT_NE(failure->text.find("redis> TTL idem:v1:7:k1\n(integer) 60      ← article: 59\n  ✕ expected (integer) 59, got "
                                 "(integer) 60\n"),
              std::string::npos)
        << failure->text;
}

TEST(JunitReporterTest, an_empty_run_is_still_a_valid_suite) {
    const XmlElement root = test::parse_xml(render(RunReport{}));
    EXPECT_EQ(root.all("testsuite")[0]->attr("tests"), "0");
    EXPECT_TRUE(root.all("testcase").empty());
}

}  // namespace junit_reporter_test
}  // namespace relab
