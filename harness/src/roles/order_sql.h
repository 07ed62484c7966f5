#pragma once

#include <string>

#include "ports/ports.h"

namespace relab {

// The statement a consumer's write runs, exactly as the article prints it. The real OrderStore
// executes this text; the simulator records it.
//   plain: UPDATE tmp_orders SET status = 'paid' WHERE id = 42
//   cas:   UPDATE tmp_orders SET status = 'paid', version = 2 WHERE id = 42 AND version < 2
std::string order_write_sql(const OrderWrite& w);

}  // namespace relab
