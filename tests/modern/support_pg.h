/* support_pg.h — PostgreSQL for the store tests: a fresh schema on the server that
 * WFBRIDGE_TEST_PG names (a libpq connection string or URI), a connection string selecting
 * it, and plain SQL behind the store's back. */
#ifndef SUPPORT_PG_H
#define SUPPORT_PG_H

#include <stdbool.h>
#include <stddef.h>

/* Is WFBRIDGE_TEST_PG set? If not, prints "SUITE: skipped: ..." once to stderr. */
bool wf_test_pg_available(const char *suite);
/* Create a new schema (name into schema[64]) and write a connection string selecting it. */
void wf_test_pg_schema(char *conninfo, size_t size, char schema[64]);
void wf_test_pg_drop(const char *schema);
/* Run SQL on `conninfo` (asserting success). */
void wf_test_pg_exec(const char *conninfo, const char *sql);
/* The first column of the first row of `sql` (wf_free it; NULL for SQL NULL). */
char *wf_test_pg_query(const char *conninfo, const char *sql);

#endif
