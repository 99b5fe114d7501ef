// include/pgmq/pg/partman.hpp
// Finding pg_partman: its schema is discovered, never assumed, and its major
// version picks the create_parent call shape. Requires SPI; may ereport.
#pragma once

#include "pgmq/pg/boundary.hpp"

namespace pgmq::pg {

struct Partman {
	bool installed;
	char schema[NAMEDATALEN];
	int major_version;
};

// Looks pg_partman up in pg_extension.
void FindPartman(Partman *partman);

}  // namespace pgmq::pg
