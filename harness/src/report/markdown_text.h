// Markdown helpers shared by the generated docs (docs/labs.md, docs/scenarios.md) and the docs lint
// test: escaping prose for a table cell or a paragraph, and GitHub's heading anchors.
#pragma once

#include <map>
#include <string>

namespace relab {

// Prose as Markdown text: the characters Markdown or HTML would read as syntax are escaped, line
// breaks become spaces (a table row is one line).
std::string md_escape(const std::string& text);
// `text` as one inline code span, with a longer fence when it holds backticks itself.
std::string md_code(const std::string& text);

// GitHub's anchor for a heading's text (its Markdown as written): inline code marks, emphasis,
// links' targets and HTML tags dropped, lower-cased, punctuation removed, spaces made hyphens.
std::string github_slug(const std::string& heading);

// The anchors of one document's headings in order: a repeated slug gets -1, -2, ... as on GitHub.
class Slugger {
public:
    std::string add(const std::string& heading);

private:
    std::map<std::string, int> m_seen;
};

}  // namespace relab
