#include "scenario/loader/documented_loader.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace relab::scenario_json {

namespace {

// {"quote_vi", "section", "text", "text_vi"} plus the caller's own fields: a passage of the
// article, which is nothing without its words and where they stand.
ArticlePassage read_passage(const Object& o) {
    ArticlePassage p;
    p.quote_vi = o.req_string("quote_vi");
    p.section = o.req_string("section");
    p.text = o.opt_string("text", "");
    p.text_vi = o.opt_string("text_vi", "");
    return p;
}

DocumentedThroughput read_throughput(const Reader& r, const json& v, const std::string& path) {
    const Object o(r, v, path, {"per_s", "quote_vi", "section", "text", "text_vi"});
    DocumentedThroughput t;
    const json& per_s = o.at("per_s");
    if (!per_s.is_number() || !(per_s.get<double>() > 0)) r.expected(o.path("per_s"), "a number above 0", per_s);
    t.per_s = per_s.get<double>();
    t.passage = read_passage(o);
    return t;
}

std::vector<ArticlePassage> read_also(const Reader& r, const json& v, const std::string& path) {
    std::vector<ArticlePassage> out;
    r.array(v, path, true);
    for (size_t i = 0; i < v.size(); ++i)
        out.push_back(read_passage(Object(r, v[i], child(path, i), {"quote_vi", "section", "text", "text_vi"})));
    return out;
}

// The article a quote comes from, and the rule that a quote and its citation go together.
void read_citation(const Object& o, Documented& d) {
    const Reader& r = o.reader();
    if (o.has("article")) {
        const std::string name = o.req_string("article");
        const auto article = article_named(name);
        if (!article) r.expected(o.path("article"), "one of \"ordering\", \"idempotency\"", o.at("article"));
        d.article = *article;
    }
    d.quote_vi = o.opt_string("quote_vi", "");
    d.section = o.opt_string("section", "");
    if (!d.quote_vi.empty()) {
        if (d.article == Article::none) r.fail(o.path("article"), "required with quote_vi: the article it quotes");
        if (d.section.empty()) r.fail(o.path("section"), "required with quote_vi: where in the article it stands");
    } else {
        for (const char* key : {"article", "section"})
            if (o.has(key)) r.fail(o.path(key), "needs quote_vi: it cites the article's words, and there are none");
    }
    const bool passages = o.has("throughput") || o.has("also");
    if (passages && d.article == Article::none)
        r.fail(o.path("article"), "required with throughput or also: the article their quotes come from");
}

}  // namespace

Documented read_documented(const Reader& r, const json& v, const std::string& path) {
    const Object o(r, v, path,
                   {"text", "text_vi", "wrong", "of", "relab_choice", "relab_choice_vi", "article", "section", "quote_vi",
                    "throughput", "also"});
    Documented d;
    d.text = o.opt_string("text", "", false);
    d.text_vi = o.opt_string("text_vi", "", false);
    if (auto wrong = o.maybe_int("wrong", 0, k_int_max)) d.wrong = static_cast<int>(*wrong);
    if (auto of = o.maybe_int("of", 1, k_int_max)) d.of = static_cast<int>(*of);
    d.relab_choice = o.opt_string("relab_choice", "");
    d.relab_choice_vi = o.opt_string("relab_choice_vi", d.relab_choice);
    if (d.wrong && d.of && *d.wrong > *d.of)
        r.fail(o.path("wrong"), fmt::format("expected at most \"of\" ({}), got {}", *d.of, *d.wrong));
    read_citation(o, d);
    if (o.has("throughput")) d.throughput = read_throughput(r, o.at("throughput"), o.path("throughput"));
    if (o.has("also")) d.also = read_also(r, o.at("also"), o.path("also"));
    return d;
}

Comparison read_comparison(const Reader& r, const json& v, const std::string& path) {
    const Object o(r, v, path, {"table", "row", "article"});
    Comparison c;
    c.table = o.req_string("table");
    const bool slug = std::all_of(c.table.begin(), c.table.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
    });
    if (!slug || c.table.front() == '-')
        r.fail(o.path("table"), "expected lower-case letters, digits and '-' (it names the table's files), got \"" + c.table + "\"");
    c.row = o.req_string("row");
    if (o.has("article")) {
        const Object a(r, o.at("article"), o.path("article"), {"row", "wrong", "of"});
        ComparisonArticleRow row;
        row.row = a.req_string("row");
        row.of = static_cast<int>(a.req_int("of", 1, k_int_max));
        row.wrong = static_cast<int>(a.req_int("wrong", 0, row.of));
        c.article = row;
    }
    return c;
}

}  // namespace relab::scenario_json
