#include "process/pg_schema_guard.h"

#include <cstdio>

#include "clients/pg_client.h"
#include "process/reaper.h"

namespace relab {

PgSchemaGuard::PgSchemaGuard(const PgEndpoint& ep, std::string name) : m_ep(ep), m_name(std::move(name)) {
    // Registered first: a kill between CREATE and the registration would leave the schema behind.
    reaper::watch_pg_schema(m_ep, m_name);
    try {
        create_schema(m_ep, m_name);
    } catch (...) {
        reaper::forget_pg_schema(m_ep, m_name);
        throw;
    }
}

PgSchemaGuard::~PgSchemaGuard() { drop(); }

void PgSchemaGuard::drop() noexcept {
    if (m_dropped) return;
    m_dropped = true;
    try {
        drop_schema(m_ep, m_name);
        reaper::forget_pg_schema(m_ep, m_name);
    } catch (const PgError& e) {
        // A server that is gone took the schema with it; anything else leaves it behind (and the
        // reaper tries again when relab ends).
        if (e.sqlstate().compare(0, 2, "08") != 0)
            std::fprintf(stderr, "relab: schema %s was not dropped: %s\n", m_name.c_str(), e.what());
        else
            reaper::forget_pg_schema(m_ep, m_name);
    } catch (...) {
    }
}

}  // namespace relab
