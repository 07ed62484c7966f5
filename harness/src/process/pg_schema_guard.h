// A PostgreSQL schema that lives as long as its object, and is dropped by the reaper should relab
// be killed first (process/reaper.h).
#pragma once

#include <string>

#include "clients/endpoint.h"

namespace relab {

// Creates schema `name` (CREATE SCHEMA) on construction; DROP SCHEMA ... CASCADE on destruction.
// Registered with the reaper in between, so a SIGKILLed relab's schema is dropped too.
class PgSchemaGuard {
public:
    PgSchemaGuard(const PgEndpoint& ep, std::string name);
    ~PgSchemaGuard();
    PgSchemaGuard(const PgSchemaGuard&) = delete;
    PgSchemaGuard& operator=(const PgSchemaGuard&) = delete;
    const std::string& name() const { return m_name; }
    void drop() noexcept;  // idempotent

private:
    PgEndpoint m_ep;
    std::string m_name;
    bool m_dropped = false;
};

}  // namespace relab
