/* store_db.h: the store's SQLite connection, for the queries of db/ itself
 * (query.c, export.c) and for tests. Nothing above the db floor includes
 * it: everything else asks the store's typed readers and writers. */
#ifndef TUNE_STORE_DB_H
#define TUNE_STORE_DB_H

#include <sqlite3.h>

#include "store.h"

/* The connection, for read queries. Do not close it, and do not leave a
 * transaction open across store calls other than
 * tune_store_begin/commit/rollback. */
sqlite3 *tune_store_db(tune_store *st);

#endif /* TUNE_STORE_DB_H */
