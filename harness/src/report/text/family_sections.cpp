// The one place of the text report that decides by a lab's kind: the section each family writes.
#include "report/text/text_sections.h"

namespace relab {

TextSection text_section(LabKind kind) {
    switch (kind) {
        case LabKind::stream: return write_stream_text;
        case LabKind::sessions: return write_sessions_text;
        case LabKind::idem_clients:
        case LabKind::idem_benchmark:
        case LabKind::idem_cluster: return write_idem_text;
    }
    return write_stream_text;
}

}  // namespace relab
