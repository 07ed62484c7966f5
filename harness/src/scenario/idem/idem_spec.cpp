// The idempotency structs' rules across their own fields, checked right after a file's read (each
// Described<S>::check), and a client's generated requests. Rules that need the rest of the lab (a
// resend's fault among the lab's faults, which parts a lab of each kind may hold) are the lab
// loader's (scenario/loader/).
#include "scenario/idem/idem_spec.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace relab {

std::vector<IdemRequest> idem_client_requests(const IdemClient& c) {
    std::vector<IdemRequest> out = c.requests;
    if (!c.generate) return out;
    const IdemGenerate& g = *c.generate;
    std::vector<int64_t> resend = g.resend_after_ms;
    std::sort(resend.begin(), resend.end());
    for (int64_t i = 0; i < g.count; ++i) {
        IdemRequest q;
        q.user_id = g.user_id;
        q.client_key = fmt::format("{}-{}", c.name, i + 1);
        q.payload = g.payload;
        q.resend_after_fault = g.resend_after_fault;
        const int64_t at = g.start_ms + i * g.every_ms;
        q.send_at_ms = {at};
        for (int64_t d : resend) q.send_at_ms.push_back(at + d);
        out.push_back(std::move(q));
    }
    return out;
}

namespace desc {

using scenario_json::child;

namespace {

// The Vietnamese text a file leaves out is the English one.
void idem_default_vi(const Object& o, const char* key, const std::string& english, std::string& vi) {
    if (!o.has(key)) vi = english;
}

// Each item of the list at `key` names itself once: a second one is refused where it stands.
template <class T>
void idem_unique_names(const Object& o, const char* key, const std::vector<T>& items, const char* what) {
    std::set<std::string> seen;
    for (size_t i = 0; i < items.size(); ++i)
        if (!seen.insert(items[i].name).second)
            o.reader().fail(child(child(o.path(key), i), "name"),
                            fmt::format("duplicate {} name \"{}\"", what, items[i].name));
}

}  // namespace

void Described<IdemRequest>::check(const Object& o, IdemRequest& q) {
    if (!std::is_sorted(q.send_at_ms.begin(), q.send_at_ms.end()))
        o.reader().expected(o.path("at_ms"), "send times in increasing order", o.at("at_ms"));
}

void Described<IdemClient>::check(const Object& o, IdemClient& c) {
    if (c.requests.empty() && !c.generate) o.reader().fail(o.path(), "a client needs \"requests\" or \"generate\"");
}

void Described<IdemMiddlewareSpec>::check(const Object& o, IdemMiddlewareSpec& m) {
    if (o.has("add_get_gap_ms") && m.claim != IdemClaim::add_get)
        o.reader().fail(o.path("add_get_gap_ms"), "applies to \"claim\": \"add_get\" only (the pause between add and get)");
}

void Described<ClusterKeyPair>::check(const Object& o, ClusterKeyPair& p) { idem_default_vi(o, "note_vi", p.note, p.note_vi); }

void Described<ClusterLoad>::check(const Object& o, ClusterLoad& l) { idem_default_vi(o, "note_vi", l.note, l.note_vi); }

void Described<ClusterHotUser>::check(const Object& o, ClusterHotUser& h) { idem_unique_names(o, "loads", h.loads, "load"); }

void Described<IdemCluster>::check(const Object& o, IdemCluster& c) {
    const Reader& r = o.reader();
    idem_unique_names(o, "pairs", c.pairs, "pair");
    if (c.script.empty() && o.has("script_args")) r.fail(o.path("script_args"), "arguments without a \"script\"");
    if (!c.script.empty() && c.pairs.empty())
        r.fail(o.path("script"), "the script runs over the keys of each pair: add \"pairs\"");
    if (c.pairs.empty() && !c.hot_user) r.fail(o.path(), "a cluster lab needs \"pairs\" or \"hot_user\" (or both)");
}

void Described<IdemSpec>::check(const Object& o, IdemSpec& idem) {
    idem_unique_names(o, "clients", idem.clients, "client");
    idem_default_vi(o, "scaling_vi", idem.scaling, idem.scaling_vi);
    idem_default_vi(o, "documented_duplicates_note_vi", idem.documented_duplicates_note,
                    idem.documented_duplicates_note_vi);
}

}  // namespace desc

}  // namespace relab
