#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report/reporter.h"
#include "report_fixture.h"
#include "xml_tree.h"

namespace relab {
namespace html_reporter_test {

std::string render(const RunReport& run, const HtmlOptions& opts = {}) {
    std::ostringstream out;
    make_html_reporter(opts)->report(run, out);
    return out.str();
}

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

// The part of the page that belongs to one lab.
std::string section(const std::string& html, const std::string& id) {
    const size_t start = html.find("id=\"lab-" + id + "\"");
    if (start == std::string::npos) return {};
    return html.substr(start, html.find("</section>", start) - start);
}

// Every <svg …>…</svg> of the page, each parsed as XML.
std::vector<test::XmlElement> svgs(const std::string& html) {
    std::vector<test::XmlElement> out;
    for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 4)) {
        const size_t end = html.find("</svg>", at);
        out.push_back(test::parse_xml(html.substr(at, end + 6 - at)));
    }
    return out;
}

std::vector<std::string> lanes_of(const test::XmlElement& svg) {
    std::vector<std::string> lanes;
    for (const auto* g : svg.all("g"))
        if (g->attrs.count("class") && g->attr("class") == "lane") lanes.push_back(g->attr("data-lane"));
    return lanes;
}

TEST(HtmlReporterTest, the_page_is_self_contained) {
    const std::string html = render(test::sample_run());
    EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", 0), 0u);
    EXPECT_EQ(html.substr(html.size() - 16), "</body>\n</html>\n");
    EXPECT_EQ(count(html, "<script"), 0u);
    EXPECT_EQ(count(html, "<link"), 0u);
    EXPECT_EQ(count(html, " src="), 0u);
    EXPECT_EQ(count(html, "url(http"), 0u);
    // The only URL is the SVG namespace name, which is never fetched.
    EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    EXPECT_EQ(count(html, "<style>"), 1u);
}

TEST(HtmlReporterTest, header_and_summary_table_list_every_lab_with_documented_beside_measured) {
    const std::string html = render(test::sample_run());
    EXPECT_NE(html.find("<p class=\"totals\">6 labs: <span class=\"badge held\">4 held</span> <span class=\"badge "
                        "broken\">1 broken</span> <span class=\"badge skipped\">1 skipped</span></p>"),
              std::string::npos);
    EXPECT_NE(html.find("Redis 7.0.15 · PostgreSQL 15.8 (external) · seed 20261021"), std::string::npos);
    // The column's words are relab's summary of the article's result, and its header says so.
    EXPECT_NE(html.find("<th>title</th><th>documented (relab&#39;s summary)</th>"), std::string::npos);
    RunReport all_held;
    all_held.labs = {test::baseline_lab()};
    EXPECT_NE(render(all_held).find("<p class=\"totals\">1 lab: <span class=\"badge held\">1 held</span> <span "
                                    "class=\"badge zero\">0 broken</span> <span class=\"badge zero\">0 skipped</span></p>"),
              std::string::npos);
    EXPECT_NE(html.find("<tr class=\"held\"><td><a href=\"#lab-08a-baseline\"><code>08a-baseline</code></a></td><td><span "
                        "class=\"backend real\" title=\"real redis-server and PostgreSQL\">real</span></td><td>BUG: "
                        "2 parallel consumers; plain UPDATE</td><td>10/10 — wrong 10/10; created overwrites at 816 "
                        "ms</td><td class=\"num\">2/2</td><td>wrong = all</td><td><span class=\"badge "
                        "held\">held</span></td></tr>"),
              std::string::npos);
    EXPECT_NE(html.find("<td class=\"num\">1/2 cases</td><td>wrong = none</td><td><span class=\"badge "
                        "broken\">broken</span></td></tr>"),
              std::string::npos);
    EXPECT_NE(html.find("<tr class=\"skipped\"><td><a href=\"#lab-08h-idmp\">"), std::string::npos);
    const size_t table = html.find("<table class=\"summary\">");
    ASSERT_NE(table, std::string::npos);
    EXPECT_EQ(count(html.substr(table, html.find("</table>", table) - table), "<tr class="), 6u);
    EXPECT_EQ(count(html, "<section class=\"lab "), 6u);
    for (const char* id : {"08a-baseline", "08c-s4a", "08f-p2", "08g-p1-naive", "08d-cas-overlap", "08h-idmp"})
        EXPECT_FALSE(section(html, id).empty()) << id;
    EXPECT_NE(html.find("<section class=\"lab broken\" id=\"lab-08d-cas-overlap\">"), std::string::npos);
    EXPECT_NE(html.find("<section class=\"lab skipped\" id=\"lab-08h-idmp\">"), std::string::npos);
    EXPECT_NE(section(html, "08h-idmp").find("skipped: XADD IDMP needs Redis 8.6; this server is 7.0.15"),
              std::string::npos);
}

// relab's choice and a further passage of the article stand apart from the quote, each labelled.
TEST(HtmlReporterTest, relabs_choice_and_the_articles_other_words_are_told_apart) {
    RunReport run = test::sample_run();
    run.labs[1].scenario.documented.relab_choice = "the compare-and-delete Lua script where the server has no DELEX";
    const std::string lab = section(render(run), "08c-s4a");
    EXPECT_NE(lab.find("<p class=\"relab choice\"><span class=\"who\">relab&#39;s choice, not the article&#39;s:</span> "
                       "the compare-and-delete Lua script where the server has no DELEX</p>"),
              std::string::npos)
        << lab;
    EXPECT_NE(lab.find("<blockquote class=\"article\" lang=\"vi\"><p>“lock là mutual exclusion (loại trừ lẫn nhau), không "
                       "phải ordering (sắp thứ tự).”</p><footer>the article also, <cite>Vấn đề thứ tự khi xử lý background "
                       "job bằng Redis Stream — solution và trade-off</cite>, §3, S4</footer></blockquote><p "
                       "class=\"relab\"><span class=\"who\">relab&#39;s note:</span> lock-fifo puts a per-key FIFO behind "
                       "the lock</p>"),
              std::string::npos)
        << lab;
}

// S1's measured throughput beside the article's figure for it.
TEST(HtmlReporterTest, the_articles_throughput_figure_stands_beside_the_measured_one) {
    RunReport run;
    run.labs = {test::s1_throughput_lab()};
    const std::string lab = section(render(run), "08b-s1");
    EXPECT_NE(lab.find("<p class=\"figure\">throughput 1.25 events/s</p><blockquote class=\"article\" lang=\"vi\"><p>“một "
                       "consumer đơn chỉ đạt tối đa ~1,25 event/giây”</p><footer>the article&#39;s figure, <cite>"),
              std::string::npos)
        << lab;
    EXPECT_NE(lab.find("<p class=\"figure\">throughput 2.35 jobs/s (median of 2 trial(s))</p></div>"), std::string::npos) << lab;
}

TEST(HtmlReporterTest, a_lab_run_beside_another_arrangement_shows_both_throughputs_and_the_ratio) {
    RunReport run;
    run.labs = {test::s2_beside_s1_lab()};
    const std::string lab = section(render(run), "s2-s1-same-workload");
    EXPECT_NE(lab.find("<p class=\"figure beside\">throughput 30.00 jobs/s (median of 2 trial(s)); beside it, S1 on "
                       "the same workload in the same run: 10.00 jobs/s (median of 2 trial(s)); this lab&#39;s is "
                       "3.00x it</p></div>"),
              std::string::npos)
        << lab;
}

TEST(HtmlReporterTest, documented_result_stands_beside_the_measured_one) {
    const std::string lab = section(render(test::sample_run()), "08a-baseline");
    // The article's words as a quotation citing its title and section, relab's summary apart and labelled.
    EXPECT_NE(lab.find("<div class=\"documented\"><h3>documented</h3><p class=\"count\">10/10</p><blockquote "
                       "class=\"article\" lang=\"vi\"><p>“10/10 lần đơn #42 kết thúc ở created.”</p><footer>the "
                       "article, <cite>Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và "
                       "trade-off</cite>, §2</footer></blockquote><p class=\"relab\"><span class=\"who\">relab&#39;s "
                       "summary:</span> wrong 10/10; created overwrites at 816 ms</p></div>\n<div class=\"measured\"><h3>"
                       "measured</h3><p class=\"count\">2/2</p><p>trials with a wrong final state (not paid)</p>"),
              std::string::npos)
        << lab;
    EXPECT_NE(lab.find("expectation: <code>wrong = all</code> → <span class=\"badge held\">held</span>"), std::string::npos);
}

TEST(HtmlReporterTest, final_status_chips_mark_wrong_trials) {
    const std::string html = render(test::sample_run());
    const std::string baseline = section(html, "08a-baseline");
    EXPECT_NE(baseline.find(R"~(<span class="chip wrong" title="trial 1, seed 1001; #42=created (expected paid)"><b>1</b> created ✕</span>)~"),
              std::string::npos)
        << baseline;
    const std::string lock = section(html, "08c-s4a");
    EXPECT_NE(lock.find(R"(<span class="chip" title="trial 1, seed 0"><b>1</b> paid</span>)"), std::string::npos);
    EXPECT_EQ(count(lock, "<span class=\"chip wrong\""), 2u);
    const std::string two = section(html, "08g-p1-naive");
    EXPECT_NE(two.find("<b>1</b> #42=created✕ #43=paid</span>"), std::string::npos) << two;
    EXPECT_NE(two.find("<b>2</b> #42=paid #43=paid</span>"), std::string::npos);
}

TEST(HtmlReporterTest, timelines_draw_a_lane_per_actor_and_highlight_the_overwriting_write) {
    const std::string html = render(test::sample_run());
    const std::string baseline = section(html, "08a-baseline");
    // Two trials, at most three: every trial gets a timeline.
    EXPECT_EQ(count(baseline, "<figure class=\"timeline\" data-trial="), 2u);
    const auto drawn = svgs(baseline);
    ASSERT_EQ(drawn.size(), 2u);
    for (const auto& svg : drawn) EXPECT_EQ(lanes_of(svg), (std::vector<std::string>{"producer", "C1", "C2"}));
    EXPECT_NE(baseline.find(R"(class="bar job overwrite")"), std::string::npos);
    EXPECT_NE(baseline.find(R"(<polygon class="marker write overwrite")"), std::string::npos);
    EXPECT_NE(baseline.find(">UPDATE 1 — overwrites v=2</text>"), std::string::npos);
    EXPECT_NE(baseline.find(R"(<text class="marker-label" )"), std::string::npos);  // C2's plain "UPDATE 1"
    EXPECT_EQ(count(baseline, R"(<circle class="marker receive")"), 4u);
    EXPECT_EQ(count(baseline, R"(<polygon class="marker publish ok")"), 4u);
    // A time axis in ms.
    EXPECT_NE(baseline.find(">0 ms</text>"), std::string::npos);
    EXPECT_NE(baseline.find(">800 ms</text>"), std::string::npos);
}

TEST(HtmlReporterTest, lock_waits_are_hatched_and_a_late_release_is_flagged) {
    const std::string lock = section(render(test::sample_run()), "08c-s4a");
    EXPECT_EQ(count(lock, "<figure class=\"timeline\" data-trial="), 3u);
    EXPECT_NE(lock.find(R"(<rect class="bar wait" )"), std::string::npos);
    EXPECT_NE(lock.find(R"(fill="url(#hatch-)"), std::string::npos);
    EXPECT_NE(lock.find("stroke-dasharray=\"4 2\""), std::string::npos);
    EXPECT_NE(lock.find(R"(<rect class="marker lock-release bad")"), std::string::npos);
    EXPECT_NE(lock.find(">release → 0</text>"), std::string::npos);
    EXPECT_EQ(count(lock, R"(<rect class="marker lock-acquire")"), 4u);
    // Every hatch pattern id is defined once on the page.
    const std::string html = render(test::sample_run());
    std::set<std::string> ids;
    const std::regex id_re("<pattern id=\"([^\"]+)\"");
    size_t patterns = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), id_re); it != std::sregex_iterator(); ++it, ++patterns)
        EXPECT_TRUE(ids.insert((*it)[1]).second) << (*it)[1];
    // One per timeline and one for the legend: baseline 2 trials, S4a 3, P2 1, two orders 2, the sessions' 2 cases.
    EXPECT_EQ(count(html, "<svg class=\"timeline\""), 10u);
    EXPECT_EQ(patterns, 11u);
    EXPECT_EQ(ids.count("hatch-legend"), 1u);
}

TEST(HtmlReporterTest, failed_publishes_are_crosses_and_a_stale_cas_write_is_not_highlighted) {
    const std::string cas = section(render(test::sample_run()), "08f-p2");
    EXPECT_EQ(count(cas, R"(<path class="marker publish fail")"), 2u);
    EXPECT_EQ(count(cas, R"(<polygon class="marker publish ok")"), 2u);
    EXPECT_NE(cas.find(">UPDATE 0</text>"), std::string::npos);
    // Neither the job nor the write is flagged (the text report below still counts "0 stale overwrites").
    EXPECT_EQ(count(cas, "job overwrite"), 0u);
    EXPECT_EQ(count(cas, "write overwrite"), 0u);
    EXPECT_EQ(count(cas, "overwrites v="), 0u);
    EXPECT_NE(cas.find("0 stale overwrites"), std::string::npos);
}

TEST(HtmlReporterTest, selection_shows_trial_one_and_the_first_wrong_trial_of_a_long_lab) {
    LabResult lab = test::baseline_lab();
    lab.trials.clear();
    for (int i = 1; i <= 6; ++i) {
        TrialOutcome t = test::baseline_lab().trials[0];
        t.trial = i;
        t.wrong = i == 4 || i == 5;
        lab.trials.push_back(t);
    }
    RunReport run;
    run.labs = {lab};
    const std::string html = render(run);
    EXPECT_EQ(count(html, "<figure class=\"timeline\" data-trial="), 2u);
    EXPECT_NE(html.find("<figure class=\"timeline\" data-trial=\"1\">"), std::string::npos);
    EXPECT_NE(html.find("<figure class=\"timeline\" data-trial=\"4\">"), std::string::npos);
    EXPECT_EQ(count(render(run, HtmlOptions{TimelineSelection::all, 3}), "<figure class=\"timeline\" data-trial="), 6u);
}

TEST(HtmlReporterTest, session_labs_show_a_timeline_per_case_and_the_transcript) {
    const std::string lab = section(render(test::sample_run()), "08d-cas-overlap");
    EXPECT_EQ(count(lab, "<figure class=\"timeline\" data-case="), 2u);
    const auto drawn = svgs(lab);
    ASSERT_EQ(drawn.size(), 2u);
    EXPECT_EQ(lanes_of(drawn[0]), (std::vector<std::string>{"A", "B"}));
    EXPECT_EQ(lanes_of(drawn[1]), (std::vector<std::string>{"A"}));
    EXPECT_NE(lab.find(R"(<rect class="bar step failed")"), std::string::npos);
    EXPECT_NE(lab.find(">ERROR 40001</text>"), std::string::npos);
    EXPECT_NE(lab.find("<pre class=\"transcript\">### CAS when 2 UPDATEs OVERLAP   (08d-cas.txt)\n"), std::string::npos);
    // SQL is escaped in the transcript.
    EXPECT_NE(lab.find("UPDATE tmp_orders SET status = &#39;paid&#39;, version = 2 WHERE id = 42 AND version &lt; 2;\nUPDATE 1\n"),
              std::string::npos);
    EXPECT_NE(lab.find("<li>1 of 2 cases ended with wrong rows (expected none)</li>"), std::string::npos);
}

TEST(HtmlReporterTest, markup_in_titles_actors_sql_and_ops_is_escaped) {
    LabResult lab = test::baseline_lab();
    lab.scenario.title = "<b>\"x\" & 'y'</b>";
    lab.scenario.documented.text = "a < b";
    lab.trials.resize(1);
    lab.trials[0].history.push_back(test::rec(1, 900, "C<3>", Op::error, {{"error", "SELECT '<x>'"}}));
    RunReport run;
    run.labs = {lab};
    const std::string html = render(run);
    EXPECT_NE(html.find("&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;"), std::string::npos);
    EXPECT_EQ(html.find("<b>\"x\""), std::string::npos);
    EXPECT_NE(html.find("relab&#39;s summary:</span> a &lt; b</p>"), std::string::npos);
    EXPECT_NE(html.find("data-lane=\"C&lt;3&gt;\""), std::string::npos);
    EXPECT_NE(html.find("data-op=\"error\""), std::string::npos);
    EXPECT_EQ(html.find("C<3>"), std::string::npos);
    EXPECT_EQ(html.find("'<x>'"), std::string::npos);
    const auto drawn = svgs(html);  // each parses as XML
    ASSERT_EQ(drawn.size(), 2u);    // the legend and trial 1's timeline
    for (const auto& svg : drawn) EXPECT_EQ(svg.name, "svg");
    auto lanes = lanes_of(drawn[1]);  // the odd actor got its lane, its name intact once unescaped
    std::sort(lanes.begin(), lanes.end());
    EXPECT_EQ(lanes, (std::vector<std::string>{"C1", "C2", "C<3>", "producer"}));
}

TEST(HtmlReporterTest, every_svg_is_well_formed_and_records_without_a_drawing_of_their_own_are_drawn) {
    RunReport run = test::sample_run();
    run.labs[0].trials[0].history.push_back(test::rec(1, 400, "dispatcher", Op::outbox_insert, {{"outbox_id", 3}}));
    run.labs[0].trials[0].history.push_back(test::rec(1, 420, "C1", Op::group_created, {{"group", "g"}, {"start", "0"}}));
    const std::string html = render(run);
    const auto drawn = svgs(html);
    // legend + baseline 2 + lock 3 + cas 1 + two orders 2 + session cases 2
    EXPECT_EQ(drawn.size(), 11u);
    EXPECT_NE(html.find(R"(<circle class="marker other" data-op="outbox_insert")"), std::string::npos);
    EXPECT_NE(html.find(R"(<circle class="marker other" data-op="group_created")"), std::string::npos);
    EXPECT_NE(html.find(">outbox_insert</text>"), std::string::npos);
    EXPECT_EQ(lanes_of(drawn[1]), (std::vector<std::string>{"dispatcher", "producer", "C1", "C2"}));
}

TEST(HtmlReporterTest, a_simulated_lab_shows_its_backend_rate_interval_and_failing_seeds_with_replay_commands) {
    const std::string html = render(test::sim_and_idem_run());
    // Summary row: the backend and, under the count, the rate with its interval.
    EXPECT_NE(html.find("<tr class=\"held\"><td><a href=\"#lab-08c-s4a-sim\"><code>08c-s4a</code></a></td><td><span "
                        "class=\"backend sim\" title=\"deterministic simulator\">sim</span></td><td>S4a: 2 consumers + lock "
                        "per key</td><td>the late release returns 0</td><td class=\"num\">30/150<small>20.0% (95% CI "
                        "14.4–27.1%) over 150 trials</small></td>"),
              std::string::npos)
        << html.substr(0, 12000);
    const std::string lab = section(html, "08c-s4a-sim");
    ASSERT_FALSE(lab.empty());
    EXPECT_NE(lab.find("<h2><span class=\"badge held\">held</span> <code>08c-s4a</code> <span class=\"backend sim\""),
              std::string::npos);
    EXPECT_NE(lab.find("<h3>measured (simulated)</h3><p class=\"count\">30/150</p><p>trials with a wrong final state (not "
                       "paid)</p><p class=\"rate\">wrong rate <b>20.0%</b>, 95% CI 14.4–27.1%, over 150 simulated "
                       "trials</p>"),
              std::string::npos)
        << lab.substr(0, 3000);
    // The interval drawn on a 0–100 % axis from x=28 to x=280: 14.4 % → 64.2, 27.1 % → 96.3, 20 % → 78.4.
    const auto drawn = svgs(lab);
    ASSERT_FALSE(drawn.empty());
    const test::XmlElement& ci = drawn[0];
    EXPECT_EQ(ci.attr("class"), "ci");
    EXPECT_EQ(ci.attr("aria-label"), "wrong rate 20.0%, 95% CI 14.4–27.1%");
    const auto rects = ci.all("rect");
    ASSERT_EQ(rects.size(), 1u);
    EXPECT_EQ(rects[0]->attr("x"), "64.2");
    EXPECT_EQ(rects[0]->attr("width"), "32.1");
    bool rate_line = false;
    for (const auto* line : ci.all("line"))
        if (line->attrs.count("class") && line->attr("class") == "rate") rate_line = line->attr("x1") == "78.4";
    EXPECT_TRUE(rate_line);
    // The first failing seeds, each with its trial and the command that replays it.
    EXPECT_NE(lab.find("<div class=\"seeds\"><h3>first failing seeds</h3>\n<ul>\n<li><code>0x5eed000000000005</code> "
                       "(trial 5) — <code class=\"cmd\">relab run 08c-s4a --backend sim --replay "
                       "0x5eed000000000005</code></li>\n<li><code>0x5eed00000000000a</code> (trial 10)"),
              std::string::npos);
    EXPECT_EQ(count(lab, "<code class=\"cmd\">relab run 08c-s4a --backend sim --replay "), 5u + 2u);  // + 2 figures
}

TEST(HtmlReporterTest, a_long_simulated_lab_tallies_its_final_states_and_draws_only_the_trials_it_kept) {
    const std::string lab = section(render(test::sim_and_idem_run()), "08c-s4a-sim");
    // Every trial counted; the chips of all 150 folded away.
    EXPECT_NE(lab.find("<p class=\"tally\">150 trials: <span class=\"chip\">paid</span> ×120 <span class=\"chip "
                       "wrong\">created ✕</span> ×30</p>\n<details><summary>trials 1–150</summary>\n"),
              std::string::npos)
        << lab.substr(0, 4000);
    EXPECT_EQ(count(lab, "<span class=\"chip\" title=\"trial "), 120u);
    EXPECT_EQ(count(lab, "<span class=\"chip wrong\" title=\"trial "), 30u);
    EXPECT_NE(lab.find(R"(<span class="chip wrong" title="trial 5, seed 0x5eed000000000005"><b>5</b> created ✕</span>)"),
              std::string::npos);
    // Trial 1 and the first wrong trial (5), each with its seed and replay command.
    EXPECT_EQ(count(lab, "<figure class=\"timeline\" data-trial="), 2u);
    EXPECT_NE(lab.find("<figcaption><b>trial 5</b> (seed <code>0x5eed000000000005</code>) <span class=\"badge "
                       "broken\">wrong</span> — stream: 1792591525929-0 created (v=1), 1792591525929-1 paid (v=2)<br>replay: "
                       "<code class=\"cmd\">relab run 08c-s4a --backend sim --replay 0x5eed000000000005</code></figcaption>"),
              std::string::npos);
    // Asked for every timeline, the trials without a history still draw nothing.
    EXPECT_EQ(count(section(render(test::sim_and_idem_run(), HtmlOptions{TimelineSelection::all, 3}), "08c-s4a-sim"),
                    "<figure class=\"timeline\" data-trial="),
              2u);
}

TEST(HtmlReporterTest, a_real_and_a_simulated_result_of_one_lab_are_two_sections) {
    RunReport run;
    run.labs = {test::lock_lab(), test::sim_lab()};
    const std::string html = render(run);
    EXPECT_NE(html.find("<section class=\"lab held\" id=\"lab-08c-s4a\">"), std::string::npos);
    EXPECT_NE(html.find("<section class=\"lab held\" id=\"lab-08c-s4a-sim\">"), std::string::npos);
    // The real one has no rate, no seeds and its chips in view.
    const std::string real = section(html, "08c-s4a");
    EXPECT_EQ(real.find("wrong rate"), std::string::npos);
    EXPECT_EQ(real.find("seeds"), std::string::npos);
    EXPECT_EQ(real.find("<details><summary>trials"), std::string::npos);
    EXPECT_NE(real.find("<h3>measured</h3>"), std::string::npos);
}

TEST(HtmlReporterTest, a_skipped_simulated_lab_says_why) {
    const std::string html = render(test::sim_and_idem_run());
    const std::string lab = section(html, "08d-cas-overlap-sim");
    EXPECT_NE(lab.find("<p class=\"skip\">skipped: scripted sessions run on the real backend only (the simulator runs "
                       "workload labs)</p>"),
              std::string::npos)
        << lab;
    EXPECT_EQ(lab.find("<figure"), std::string::npos);
    EXPECT_NE(html.find("<p class=\"totals\">4 labs: <span class=\"badge held\">2 held</span> <span class=\"badge "
                        "broken\">1 broken</span> <span class=\"badge skipped\">1 skipped</span></p>"),
              std::string::npos);
}

TEST(HtmlReporterTest, an_idempotency_lab_shows_its_counts_figures_and_a_lane_per_client) {
    const std::string html = render(test::sim_and_idem_run());
    EXPECT_NE(html.find("<td class=\"num\">1/2<small>3 orders, 1 duplicate, 1 leak</small></td>"), std::string::npos);
    EXPECT_NE(html.find("<p class=\"legend idem\">idempotency labs: "), std::string::npos);
    const std::string lab = section(html, "idem-key-hash-in-key");
    ASSERT_FALSE(lab.empty());
    EXPECT_NE(lab.find("<p class=\"count\">1/2</p><p>trials with a duplicate order or a leak</p>"), std::string::npos);
    // Counts per trial and over both, duplicates and leaks flagged; an unanswered send adds a column.
    EXPECT_NE(lab.find("<thead><tr><th></th><th>orders</th><th>duplicates</th><th>201</th><th>replays</th><th>409</th><th>"
                       "422</th><th>layer 4</th><th>5xx</th><th>leaks</th><th>sends</th><th>unanswered</th></tr></thead>"),
              std::string::npos)
        << lab.substr(0, 4000);
    EXPECT_NE(lab.find("<tr><th>trial 1</th><td>2</td><td class=\"bad\">1</td><td>2</td><td>1</td><td>0</td><td>0</td><td>"
                       "0</td><td>0</td><td class=\"bad\">1</td><td>3</td><td>0</td></tr>\n<tr><th>trial 2</th><td>1</td><td>"
                       "0</td><td>1</td><td>0</td><td>1</td><td>0</td><td>0</td><td>0</td><td>0</td><td>3</td><td>1</td></tr>\n"
                       "<tr class=\"total\"><th>all trials</th><td>3</td><td class=\"bad\">1</td><td>3</td><td>1</td><td>1"
                       "</td><td>0</td><td>0</td><td>0</td><td class=\"bad\">1</td><td>6</td><td>1</td></tr>"),
              std::string::npos);
    EXPECT_NE(lab.find("<li>✕ trial 1: user 9 was served order 1 of user 7</li>"), std::string::npos);
    EXPECT_NE(lab.find("<p class=\"scaling\">time scale: 1 s here stands for 60 s</p>"), std::string::npos);
    // The figures beside the article's, with the reason; one without the article's figure too.
    EXPECT_NE(lab.find("<tr><td>evicted_keys after the flood (allkeys-lru)</td><td class=\"measured\">6,300</td><td>72,232 "
                       "(the article&#39;s flood)</td><td class=\"why\">the count follows the flood&#39;s size: relab "
                       "writes 8 MB into 3 MB</td></tr>"),
              std::string::npos);
    EXPECT_NE(lab.find("<tr><td>OOM errors of the flood&#39;s writes</td><td class=\"measured\">0</td><td>—</td>"),
              std::string::npos);
    // What each trial left in the orders table.
    EXPECT_NE(lab.find("<h3>orders per trial</h3>"), std::string::npos);
    EXPECT_NE(lab.find(R"(<span class="chip wrong" title="trial 1, seed 9001; user 9 was served order 1 of user 7"><b>1</b> 2 orders, 1 duplicate, 1 leak ✕</span>)"),
              std::string::npos);
    EXPECT_NE(lab.find(R"(<span class="chip" title="trial 2, seed 9002"><b>2</b> 1 order</span>)"), std::string::npos);
    // Both trials drawn: clients in the order they first act, the runner's faults last.
    EXPECT_EQ(count(lab, "<figure class=\"timeline\" data-trial="), 2u);
    const auto drawn = svgs(lab);
    ASSERT_EQ(drawn.size(), 2u);
    EXPECT_EQ(lanes_of(drawn[0]), (std::vector<std::string>{"A", "U9", "relab"}));
    EXPECT_EQ(lanes_of(drawn[1]), (std::vector<std::string>{"A", "B", "relab"}));
    // A's second request made order 2 for the same key: its bar and its INSERT are red; U9's replay
    // of user 7's order is a leak.
    EXPECT_EQ(count(lab, R"(<rect class="bar request duplicate")"), 1u);
    EXPECT_NE(lab.find(">order 2 — duplicate</text>"), std::string::npos);
    EXPECT_EQ(count(lab, R"(<polygon class="marker order duplicate")"), 1u);
    EXPECT_EQ(count(lab, R"(<polygon class="marker order")"), 2u);  // orders 1 (trial 1 and 2); order 2 is the duplicate
    EXPECT_EQ(count(lab, R"(<rect class="bar request leak")"), 1u);
    EXPECT_NE(lab.find(">201 leak: order 1 of user 7</text>"), std::string::npos);
    EXPECT_NE(lab.find(R"(<polygon class="marker fault" data-op="fault")"), std::string::npos);
    EXPECT_NE(lab.find(">flood</text>"), std::string::npos);
    // B was killed: its request has no answer and runs to the end of the trial.
    EXPECT_NE(lab.find(R"(<rect class="bar request unfinished")"), std::string::npos);
    EXPECT_NE(lab.find("B request: no answer (60.0–90.4 ms)"), std::string::npos);
    // The 409 is amber, the created answers blue.
    EXPECT_NE(lab.find(R"(fill="#c98a12"><title>A request: 409 in progress (90.0–90.4 ms)</title>)"), std::string::npos);
    // Tooltips say what the middleware did, as the text report does.
    EXPECT_NE(lab.find("<title>50.500 ms  A   INSERT INTO orders (idem_key &#39;7:8f3a&#39;) → order 1</title>"),
              std::string::npos);
    // Every SVG of the page parses: the two legends, the simulated lab's interval bar and its two
    // timelines (trial 1, first wrong trial 5), this lab's two and the Redis lab's case.
    const auto all = svgs(html);
    EXPECT_EQ(all.size(), 8u);
    for (const auto& svg : all) EXPECT_EQ(svg.name, "svg");
}

TEST(HtmlReporterTest, an_idempotency_lab_with_many_trials_counts_one_row_per_outcome_the_most_frequent_first) {
    RunReport run = test::sim_and_idem_run();
    const auto lab_it = std::find_if(run.labs.begin(), run.labs.end(),
                                     [](const LabResult& l) { return l.scenario.id == "idem-key-hash-in-key"; });
    ASSERT_NE(lab_it, run.labs.end());
    const TrialOutcome first = lab_it->trials.at(0), second = lab_it->trials.at(1);
    lab_it->trials.clear();
    for (int i = 0; i < 25; ++i) {  // 10 like the first, 15 like the second, interleaved
        TrialOutcome t = i % 5 < 2 ? first : second;
        t.trial = i + 1;
        lab_it->trials.push_back(std::move(t));
    }
    const std::string lab = section(render(run), "idem-key-hash-in-key");
    const size_t like_second = lab.find("<tr><th>15 trials like trial 3</th><td>1</td>");
    const size_t like_first = lab.find("<tr><th>10 trials like trial 1</th><td>2</td><td class=\"bad\">1</td>");
    EXPECT_NE(like_second, std::string::npos) << lab.substr(0, 4000);
    EXPECT_NE(like_first, std::string::npos);
    EXPECT_LT(like_second, like_first);
    EXPECT_NE(lab.find("<tr class=\"total\"><th>all 25 trials</th>"), std::string::npos);
}

TEST(HtmlReporterTest, a_scripted_redis_lab_lists_each_step_with_the_expected_and_the_articles_reply) {
    const std::string lab = section(render(test::sim_and_idem_run()), "idem-memory");
    ASSERT_FALSE(lab.empty());
    EXPECT_NE(lab.find("<p class=\"count\">1/1 cases</p><p>cases with a reply other than expected</p>"), std::string::npos);
    EXPECT_NE(lab.find("<tr class=\"ok\"><td class=\"t\">1.2 ms</td><td>redis</td><td><code>MEMORY USAGE "
                       "idem:v1:7:k1</code></td><td class=\"reply\"><code>(integer) 200</code></td><td "
                       "class=\"expected\"><code>(integer) 100…400</code></td><td>192 (Redis 8.8)</td><td "
                       "class=\"verdict\">✓</td></tr>\n"
                       "<tr class=\"note\"><td></td><td></td><td colspan=\"2\">× 10,000 (10,000 orders/day) = <b>2.0 "
                       "MB</b></td><td></td><td>≈ 2 MB</td><td></td></tr>\n"
                       "<tr class=\"note\"><td></td><td></td><td colspan=\"5\">why: Redis 7.0 allocates the key, the value "
                       "and the expiry separately</td></tr>\n"),
              std::string::npos)
        << lab;
    EXPECT_NE(lab.find("<tr class=\"fail\"><td class=\"t\">1.5 ms</td><td>redis</td><td><code>TTL idem:v1:7:k1</code></td><td "
                       "class=\"reply\"><code>(integer) 60</code></td><td class=\"expected\"><code>(integer) 59</code></td>"
                       "<td>59</td><td class=\"verdict\">✕ expected (integer) 59, got (integer) 60</td></tr>"),
              std::string::npos);
    EXPECT_EQ(count(lab, "<tr class=\"ok\">"), 2u);
    // The figures: the documented reply with its note, and the projection.
    EXPECT_NE(lab.find("<tr><td>MEMORY USAGE idem:v1:7:k1 × 10,000 (10,000 orders/day)</td><td class=\"measured\">2.0 "
                       "MB</td><td>≈ 2 MB</td>"),
              std::string::npos);
    // The transcript is still there, folded.
    EXPECT_NE(lab.find("<details><summary>redis-cli transcript</summary>\n<pre class=\"transcript\">### Memory: MEMORY "
                       "USAGE of a done key   (idem-memory.txt)\n"),
              std::string::npos);
}

TEST(HtmlReporterTest, a_run_without_idempotency_labs_has_no_idempotency_legend) {
    EXPECT_EQ(render(test::sample_run()).find("legend idem"), std::string::npos);
}

TEST(HtmlReporterTest, a_stream_lab_shows_its_accounting_per_trial_and_summed) {
    const std::string html = render(test::sample_run());
    const std::string base = section(html, "08a-baseline");
    EXPECT_NE(base.find("<table class=\"counts accounting\">"), std::string::npos);
    EXPECT_NE(base.find("<tr><th>trial 1</th><td>2</td><td>2</td><td>0</td><td>0</td><td>0</td><td>0</td><td "
                        "class=\"bad\">1</td><td></td><td><code>stale overwrite 1: created overwrote paid (#42)</code></td></tr>"),
              std::string::npos)
        << base;
    EXPECT_NE(base.find("<tr class=\"total\"><th>all 2 trials</th><td>4</td><td>4</td><td>0</td><td>0</td><td>0</td><td>0</td>"
                        "<td class=\"bad\">2</td><td></td><td></td></tr>"),
              std::string::npos);
    // A single trial has no sum row; a scripted lab has no accounting.
    const std::string cas = section(html, "08f-p2");
    EXPECT_NE(cas.find("<tr><th>trial 1</th><td>2</td><td>2</td><td>0</td>"), std::string::npos);
    EXPECT_EQ(cas.find("all 1 trials"), std::string::npos);
    EXPECT_EQ(section(html, "08d-cas-overlap").find("accounting"), std::string::npos);
}

TEST(HtmlReporterTest, a_long_lab_lists_only_the_trials_whose_accounting_flags_something) {
    LabResult lab = test::sim_lab();  // 150 trials, every fifth one wrong
    for (auto& t : lab.trials)
        if (t.wrong) {
            t.accounting.published = 2;
            t.accounting.processed_once = 1;
            t.accounting.duplicated = 1;
            t.accounting.duplicated_examples = {fmt::format("{}-0", t.trial)};
        } else {
            t.accounting.published = t.accounting.processed_once = 2;
        }
    RunReport run;
    run.labs = {lab};
    const std::string sim = section(render(run), "08c-s4a-sim");
    EXPECT_EQ(count(sim, "<td><code>duplicated 1: "), 20u);  // 30 flagged, 20 rows
    EXPECT_NE(sim.find("<tr><th>trial 5</th><td>2</td><td>1</td><td class=\"bad\">1</td>"), std::string::npos);
    EXPECT_EQ(sim.find("<tr><th>trial 1</th>"), std::string::npos);  // nothing to flag
    EXPECT_NE(sim.find("… 10 other trials with something to flag, counted in the total"), std::string::npos);
    EXPECT_NE(sim.find("<tr class=\"total\"><th>all 150 trials</th><td>300</td><td>270</td><td class=\"bad\">30</td>"),
              std::string::npos);
}

TEST(HtmlReporterTest, faults_are_drawn_across_the_lanes_with_their_span_and_label) {
    RunReport run;
    run.labs = {test::crash_lab()};
    const std::string html = render(run);
    const std::string lab = section(html, "08x-crash");
    EXPECT_EQ(count(lab, "<g class=\"fault"), 2u);
    EXPECT_NE(lab.find("<g class=\"fault\" data-fault=\"1\"><title>fault 1: kill C1 — SIGKILL C1 after its write, before "
                       "its ack; invoke 60.000 ms, ok 62.500 ms</title>"),
              std::string::npos)
        << lab;
    EXPECT_NE(lab.find("<g class=\"fault failed\" data-fault=\"2\">"), std::string::npos);
    EXPECT_EQ(count(lab, "class=\"fault-start\""), 2u);
    EXPECT_EQ(count(lab, "class=\"fault-span\""), 2u);  // invoke → ok, invoke → fail
    EXPECT_NE(lab.find(">kill C1</text>"), std::string::npos);
    EXPECT_NE(lab.find(">restart C1 ✕</text>"), std::string::npos);
    // No lane for the nemesis; the reaper's claim and C2's redelivery are labelled.
    EXPECT_EQ(lab.find("data-lane=\"nemesis\""), std::string::npos);
    EXPECT_NE(lab.find("data-lane=\"reaper\""), std::string::npos);
    EXPECT_NE(lab.find(">XAUTOCLAIM 1</text>"), std::string::npos);
    EXPECT_NE(lab.find(">delivery 2, claimed</text>"), std::string::npos);
    // The dashed line starts in the band above the lanes, which push down by its height.
    EXPECT_NE(lab.find("<rect class=\"lane-bg\" x=\"0\" y=\"22.0\""), std::string::npos) << lab;
    // Every SVG still parses.
    for (const auto& svg : svgs(html)) EXPECT_FALSE(svg.name.empty());
}

}  // namespace html_reporter_test
}  // namespace relab

