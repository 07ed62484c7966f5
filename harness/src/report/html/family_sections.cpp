// The one place of the HTML report that says what each family shows: a row per lab kind, in
// LabKind's order (scenario/lab_kind.h), so a kind without its row fails to compile.
#include "report/html/html_sections.h"

#include "util/check.h"

namespace relab::html {

namespace {

struct HtmlFamilyRow {
    std::string_view kind;  // the kind's name, checked against its row in lab_kind.h
    HtmlFamily family;
};

const HtmlFamilyRow k_html_families[] = {
    {"stream", {stream_measured_caption, write_stream_html}},
    {"sessions", {sessions_measured_caption, write_sessions_html}},
    {"idem_clients", {idem_clients_measured_caption, write_idem_clients_html}},
    {"idem_benchmark", {idem_figures_measured_caption, write_idem_figures_html}},
    {"idem_cluster", {idem_figures_measured_caption, write_idem_figures_html}},
};
static_assert(std::size(k_html_families) == k_lab_kind_count, "one HTML family per lab kind");

}  // namespace

HtmlFamily html_family(LabKind kind) {
    const HtmlFamilyRow& row = k_html_families[static_cast<size_t>(kind)];
    RELAB_CHECK(row.kind == kind_row(kind).name, "a family row out of LabKind's order");
    return row.family;
}

}  // namespace relab::html
