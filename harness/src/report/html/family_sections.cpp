// The one place of the HTML report that decides by a lab's kind: what each family shows.
#include "report/html/html_sections.h"

namespace relab::html {

HtmlFamily html_family(LabKind kind) {
    switch (kind) {
        case LabKind::stream: return {stream_measured_caption, write_stream_html};
        case LabKind::sessions: return {sessions_measured_caption, write_sessions_html};
        case LabKind::idem_clients: return {idem_clients_measured_caption, write_idem_clients_html};
        case LabKind::idem_benchmark:
        case LabKind::idem_cluster: return {idem_figures_measured_caption, write_idem_figures_html};
    }
    return {stream_measured_caption, write_stream_html};
}

}  // namespace relab::html
