/* support_pg.c — PostgreSQL schemas and SQL for the store tests (see support_pg.h). */
#include "support_pg.h"

#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/wf_mem.h"
#include "../../common/wf_random.h"

bool wf_test_pg_available(const char *suite)
{
    const char *base = getenv("WFBRIDGE_TEST_PG");
    if (base && *base)
        return true;
    fprintf(stderr, "%s: skipped: WFBRIDGE_TEST_PG is not set (a libpq connection string; "
                    ".ci/run starts a private server and sets it)\n",
            suite);
    return false;
}

static void no_notices(void *ud, const char *message)
{
    (void)ud;
    (void)message;
}

static PGconn *connect_to(const char *conninfo)
{
    PGconn *c = PQconnectdb(conninfo);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PQsetNoticeProcessor(c, no_notices, NULL);
    return c;
}

void wf_test_pg_exec(const char *conninfo, const char *sql)
{
    PGconn *c = connect_to(conninfo);
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK,
                  "%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
}

char *wf_test_pg_query(const char *conninfo, const char *sql)
{
    PGconn *c = connect_to(conninfo);
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1, "%s: %s", sql,
                  PQresultErrorMessage(r));
    char *out = PQgetisnull(r, 0, 0) ? NULL : wf_strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(c);
    return out;
}

void wf_test_pg_schema(char *conninfo, size_t size, char schema[64])
{
    static int serial;
    const char *base = getenv("WFBRIDGE_TEST_PG");
    unsigned char r[4];
    wf_random_bytes(r, sizeof r); /* several runs may share a server */
    snprintf(schema, 64, "wfbt_%ld_%d_%02x%02x%02x%02x", (long)getpid(), serial++, r[0], r[1],
             r[2], r[3]);
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s", schema);
    wf_test_pg_exec(base, sql);
    if (strncmp(base, "postgres", 8) == 0)
        snprintf(conninfo, size, "%s%soptions=-csearch_path%%3D%s", base,
                 strchr(base, '?') ? "&" : "?", schema);
    else
        snprintf(conninfo, size, "%s options='-csearch_path=%s'", base, schema);
}

void wf_test_pg_drop(const char *schema)
{
    char sql[128];
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", schema);
    wf_test_pg_exec(getenv("WFBRIDGE_TEST_PG"), sql);
}
