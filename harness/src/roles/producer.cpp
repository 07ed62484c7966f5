#include "roles/event.h"
#include "roles/roles.h"

#include <map>

namespace relab {

void run_producer(const Scenario& s, RolePorts& p, Millis barrier_timeout) {
    p.stream.wait_readers_blocked(s.consumers, barrier_timeout);
    const Nanos origin = p.clock.now();
    p.history.record(HistoryRecord{0, origin.count(), "producer", "start", nlohmann::json::object()});

    // Events due at the same time go out back to back in file order, one XADD each, as the
    // article's producer did. (Pipelining them makes Redis answer both blocked readers in one
    // event-loop pass, newest reply first, which hands the paid holder a head start.)
    std::map<int64_t, std::vector<const EventSpec*>> due;
    for (const auto& e : s.events) due[e.at_ms].push_back(&e);

    for (const auto& [at_ms, specs] : due) {
        const Nanos wait = origin + Millis{at_ms} - p.clock.now();
        if (wait.count() > 0) p.clock.sleep_for(wait);
        for (const auto* spec : specs) {
            const Event ev{spec->order, spec->type, spec->version};
            const Nanos sent_at = p.clock.now();
            const auto ids = p.stream.xadd(s.stream.key, {event_fields(ev)});
            p.history.record(HistoryRecord{0, sent_at.count(), "producer", "publish",
                                           {{"event", event_json(ev)}, {"attempt", 1}, {"result", "ok"},
                                            {"entry", ids.at(0)}}});
        }
    }
}

}  // namespace relab
