// Force-included (-include) into every pure layer (ports, history, util, scenario, fault, roles,
// check, sim, report, bench): role code, the checker and the simulator must reach Redis and PostgreSQL only through
// the ports, so naming hiredis or libpqxx there (including their headers) fails the build.
#pragma once
#pragma GCC poison redisContext redisReply redisCommand redisCommandArgv redisConnect redisConnectWithTimeout
#pragma GCC poison pqxx PGconn PQexec
