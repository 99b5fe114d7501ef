// console/src/api_error.cpp
#include "pgmq/console/api_error.hpp"

namespace pgmq::console {

int HttpStatusForSqlstate(const std::string &sqlstate, bool connection_lost)
{
	if (connection_lost || sqlstate.empty() || sqlstate.rfind("08", 0) == 0 || sqlstate.rfind("57P", 0) == 0)
		return 503;
	if (sqlstate == "42501" || sqlstate == "25006")
		return 403;
	if (sqlstate == "42P01" || sqlstate == "42704" || sqlstate == "3F000")
		return 404;
	if (sqlstate.rfind("22", 0) == 0 || sqlstate == "42601")
		return 400;
	if (sqlstate == "55000" || sqlstate == "55P03" || sqlstate == "40001" || sqlstate == "40P01")
		return 409;
	if (sqlstate == "57014")
		return 504;
	return 500;
}

}  // namespace pgmq::console
