// The one place of the text report that says which section each family writes: a row per lab
// kind, in LabKind's order (scenario/lab_kind.h), so a kind without its row fails to compile.
#include "report/text/text_sections.h"

#include "util/check.h"

namespace relab {

namespace {

struct TextSectionRow {
    std::string_view kind;  // the kind's name, checked against its row in lab_kind.h
    TextSection section;
};

const TextSectionRow k_text_sections[] = {
    {"stream", write_stream_text},       {"sessions", write_sessions_text},  {"idem_clients", write_idem_text},
    {"idem_benchmark", write_idem_text}, {"idem_cluster", write_idem_text},
};
static_assert(std::size(k_text_sections) == k_lab_kind_count, "one text section per lab kind");

}  // namespace

TextSection text_section(LabKind kind) {
    const TextSectionRow& row = k_text_sections[static_cast<size_t>(kind)];
    RELAB_CHECK(row.kind == kind_row(kind).name, "a family row out of LabKind's order");
    return row.section;
}

}  // namespace relab
