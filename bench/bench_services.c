/* bench_services.c — workflow services over HTTP, measured with wrk on 127.0.0.1 in one run:
 * (a) a hand-coded C handler on libmicrohttpd doing the same work as the workflow (parse the
 * JSON request, compute, write the JSON reply) — the limit; (b) `wfbridge serve` of a
 * request-reply workflow service (each request creates an instance: Receive, Assign,
 * SendReply, completed) without a store; (c) the same with every instance persisted in a
 * SQLite store at durability NORMAL. Requests/s and p50/p99 latency, with ratios to (a). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/wf_mem.h"
#include "../common/wf_value.h"
#include "bench_util.h"

#define PROGRAM "bench_services"
#define BODY "{\"value\": 20}"

typedef struct wrk_result {
    double rps, p50_ms, p99_ms;
} wrk_result;

/* ---- (a) the hand-coded handler --------------------------------------------------------- */
typedef struct hand_req {
    wf_buf body;
} hand_req;

static enum MHD_Result hand_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version, const char *upload,
                                    size_t *upload_size, void **con_cls)
{
    (void)url, (void)method, (void)version;
    wf_types *types = cls;
    hand_req *r = *con_cls;
    if (!r) {
        r = calloc(1, sizeof *r);
        wf_buf_init(&r->body);
        *con_cls = r;
        return MHD_YES;
    }
    if (*upload_size) {
        wf_buf_add(&r->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    wf_value v = wf_null();
    wf_buf out;
    wf_buf_init(&out);
    unsigned status = 400;
    if (wf_json_parse(types, r->body.data, r->body.len, &v, NULL) == WF_OK &&
        v.type->kind == WF_K_RECORD) {
        const wf_value *x = wf_value_record_get(&v, "value");
        int32_t n = x && x->type->kind == WF_K_INT32 ? x->u.i32 : 0;
        wf_value res = wf_int32(n * 2 + 1), rec = wf_null();
        const char *key = "ComputeResult";
        wf_value_record(&key, &res, 1, &rec);
        wf_value_to_json(&rec, &out);
        wf_value_release(&rec);
        status = 200;
    }
    wf_value_release(&v);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(out.len, out.data, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    wf_buf_fini(&out);
    return ret;
}

static void hand_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)conn, (void)toe;
    hand_req *r = *con_cls;
    if (r) {
        wf_buf_fini(&r->body);
        free(r);
    }
}

/* ---- wrk ----------------------------------------------------------------------------------- */
static double to_ms(double v, const char *unit)
{
    return strcmp(unit, "us") == 0 ? v / 1000 : strcmp(unit, "s") == 0 ? v * 1000 : v;
}

static bool run_wrk(const char *url, const char *lua, wrk_result *res)
{
    char cmd[1200], line[512];
    snprintf(cmd, sizeof cmd, "wrk -t2 -c32 -d%ds --latency -s %s %s 2>&1",
             bu_quick() ? 1 : 5, lua, url);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    memset(res, 0, sizeof *res);
    while (fgets(line, sizeof line, p)) {
        double v;
        char unit[8];
        if (sscanf(line, "Requests/sec: %lf", &v) == 1)
            res->rps = v;
        else if (sscanf(line, " 50%% %lf%7[a-z]", &v, unit) == 2)
            res->p50_ms = to_ms(v, unit);
        else if (sscanf(line, " 99%% %lf%7[a-z]", &v, unit) == 2)
            res->p99_ms = to_ms(v, unit);
    }
    return pclose(p) == 0 && res->rps > 0;
}

/* ---- `wfbridge serve` ---------------------------------------------------------------------- */
static pid_t serve_start(const char *exe, const char *store, char *url, size_t size)
{
    char out[600];
    snprintf(out, sizeof out, "%s/wfbench-serve-%d.out", bench_tmp_base(), (int)getpid());
    unlink(out);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out, "w", stdout))
            _exit(126);
        const char *argv[12] = {exe, "serve", "bench/services/compute.xaml", "--listen",
                                "127.0.0.1:0", "--workers", "2"};
        size_t n = 7;
        if (store) {
            argv[n++] = "--store";
            argv[n++] = store;
            argv[n++] = "--durability";
            argv[n++] = "normal";
        }
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    url[0] = '\0';
    for (int i = 0; i < 1000 && !url[0]; i++) {
        FILE *f = fopen(out, "r");
        char line[300];
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "listening: %255s", url) == 1)
                break;
        if (f)
            fclose(f);
        if (!url[0])
            usleep(10000);
    }
    unlink(out);
    (void)size;
    return url[0] ? pid : -1;
}

static void serve_stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

static void report(const char *row, const wrk_result *r, const wrk_result *limit)
{
    char a[32], b[32], c[32], d[32];
    bu_md("| %s | %s | %s | %s | %s |\n", row, bu_num(r->rps, a, sizeof a),
          bu_num(r->p50_ms, b, sizeof b), bu_num(r->p99_ms, c, sizeof c),
          limit ? bu_num(100 * r->rps / limit->rps, d, sizeof d) : "100");
    printf("%-52s %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms\n", row, r->rps, r->p50_ms,
           r->p99_ms);
    bu_json(PROGRAM, "services", row, "requests/s", "req/s", bu_one(r->rps));
    bu_json(PROGRAM, "services", row, "p50", "ms", bu_one(r->p50_ms));
    bu_json(PROGRAM, "services", row, "p99", "ms", bu_one(r->p99_ms));
}

int main(int argc, char **argv)
{
    (void)argc;
    char exe[1024], lua[600], url[300], store[600];
    snprintf(exe, sizeof exe, "%s/../bin/wfbridge", dirname(strdup(argv[0])));
    snprintf(lua, sizeof lua, "%s/wfbench-post-%d.lua", bench_tmp_base(), (int)getpid());
    FILE *f = fopen(lua, "w");
    if (!f)
        return 1;
    fprintf(f, "wrk.method = \"POST\"\nwrk.body = '%s'\n"
               "wrk.headers[\"Content-Type\"] = \"application/json\"\n",
            BODY);
    fclose(f);
    wf_types *types = wf_types_create();
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_AUTO | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, hand_handler, types,
        MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED,
        hand_done, NULL, MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_END);
    if (!d)
        return 1;
    snprintf(url, sizeof url, "http://127.0.0.1:%u/ICompute/Compute",
             (unsigned)MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
    wrk_result ra, rb, rc;
    bool ok = run_wrk(url, lua, &ra);
    MHD_stop_daemon(d);
    pid_t pid = serve_start(exe, NULL, url, sizeof url);
    strncat(url, "/Compute", sizeof url - strlen(url) - 1);
    ok = ok && pid > 0 && run_wrk(url, lua, &rb);
    if (pid > 0)
        serve_stop(pid);
    snprintf(store, sizeof store, "%s/wfbench-services-%d.db", bench_tmp_base(), (int)getpid());
    pid = serve_start(exe, store, url, sizeof url);
    strncat(url, "/Compute", sizeof url - strlen(url) - 1);
    ok = ok && pid > 0 && run_wrk(url, lua, &rc);
    if (pid > 0)
        serve_stop(pid);
    const char *suffixes[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
        char path[620];
        snprintf(path, sizeof path, "%s%s", store, suffixes[i]);
        unlink(path);
    }
    unlink(lua);
    wf_types_destroy(types);
    if (!ok) {
        fprintf(stderr, "bench_services: a scenario did not run (is wrk installed?)\n");
        return 1;
    }
    bu_md("## Workflow services over HTTP\n\nwrk, 2 threads, 32 connections, %d s per "
          "scenario, POST of `%s` to 127.0.0.1; `wfbridge serve --workers 2` (docs/services.md)."
          "\n\n| Scenario | Requests/s | p50 (ms) | p99 (ms) | %% of (a) |\n|---|---|---|---|---|\n",
          bu_quick() ? 1 : 5, BODY);
    report("(a) hand-coded C handler, libmicrohttpd", &ra, NULL);
    report("(b) workflow service, no persistence", &rb, &ra);
    report("(c) workflow service, persisted per request (NORMAL)", &rc, &ra);
    bu_md("\nEach workflow request creates an instance (Receive, Assign, SendReply) that "
          "completes; in (c) it is saved to SQLite when created and when completed, and the "
          "reply leaves after that commit.\n\n");
    return 0;
}
