/* wfb_serve.c — `wfbridge serve DEF.xaml... --listen HOST:PORT [--store S]`: serves every
 * service contract of the given definitions over HTTP (SOAP 1.1 as basicHttpContextBinding,
 * WSDL, a JSON form), one endpoint per contract, until SIGTERM / SIGINT: it then stops
 * accepting, answers what is in flight (instances are saved by their runs) and exits 0
 * (docs/services.md). Without --store instances live in this process only. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h> /* setrlimit: room for thousands of connections */
#include <stdlib.h>
#include <string.h>

#include "../common/wf_mem.h"
#include "wfb_cli.h"
#include "wfb_durable.h"
#include "wfb_interop.h"
#include "wfb_serve.h"

enum MHD_Result wfb_http_request(void *cls, struct MHD_Connection *conn, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **con_cls);
void wfb_http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                        enum MHD_RequestTerminationCode toe);

static const char usage_text[] =
    "usage: wfbridge serve DEF.xaml... --listen HOST:PORT [--store S] [--workers N]\n"
    "                      [--durability full|normal] [--timeout S] [--lib-path DIR] [--json]\n\n"
    "Serve the service contracts of the definitions (their Receive activities) over HTTP:\n"
    "one endpoint per contract at http://HOST:PORT/CONTRACT taking SOAP 1.1 (as WCF's\n"
    "basicHttpContextBinding: the instance context in the WscContext cookie or a wsc:Context\n"
    "header), its WSDL at CONTRACT?wsdl, and POST /CONTRACT/OPERATION with a JSON object of\n"
    "parameters (context: the cookie or X-Instance-Id). Prints 'listening: URL' per endpoint.\n\n"
    "  --listen HOST:PORT  the IPv4 address and port (port 0: any free one)\n"
    "  --store S           keep instances in the store S (idle on a Receive: persisted and\n"
    "                      unloaded; any serve process on the store takes the next message);\n"
    "                      without it instances live in this process only\n"
    "  --workers N         worker threads running the instances (default: one per core)\n"
    "  --durability D      full (default) or normal\n"
    "  --timeout S         close a connection idle for S seconds (default 10)\n"
    "  --lib-path DIR      where native libraries are found (default $WFBRIDGE_LIB_PATH)\n"
    "  --json              each listening line as {\"status\": \"listening\", \"url\": URL}; a\n"
    "                      startup failure as the error object (docs/formats.md)\n\n"
    "SIGTERM or SIGINT: stop accepting, answer the requests in flight, exit 0.\n"
    "Exit status: 0, or 2 when a definition, the store or the address cannot be used.\n";

typedef struct serve_opts {
    const char *listen, *store, *lib_path;
    unsigned long long workers, timeout;
    int durability;
    bool json; /* --json: listening lines as JSON objects */
    const char **files;
    size_t file_count;
} serve_opts;

static int parse_opts(int argc, char **argv, serve_opts *o)
{
    static const struct option table[] = {
        {"listen", required_argument, NULL, 'l'},   {"store", required_argument, NULL, 's'},
        {"workers", required_argument, NULL, 'w'},  {"durability", required_argument, NULL, 'd'},
        {"timeout", required_argument, NULL, 't'},  {"lib-path", required_argument, NULL, 'L'},
        {"json", no_argument, NULL, 'j'},           {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, bad = 0;
    while (!bad && (c = wfb_getopt(argc, argv, table)) != -1) {
        switch (c) {
        case 'h': return -wfb_help(usage_text) - 1;
        case 'l': o->listen = optarg; break;
        case 's': o->store = optarg; break;
        case 'L': o->lib_path = optarg; break;
        case 'j': o->json = true; break;
        case 'w': bad = wfb_parse_count("--workers", optarg, 1, 256, &o->workers); break;
        case 't': bad = wfb_parse_count("--timeout", optarg, 1, 3600, &o->timeout); break;
        case 'd': bad = wfb_parse_durability(optarg, &o->durability); break;
        default: return 2;
        }
    }
    if (bad)
        return bad;
    if (optind >= argc)
        return wfb_usage_error("no definition given");
    if (!o->listen)
        return wfb_usage_error("--listen HOST:PORT is required");
    o->files = (const char **)argv + optind;
    o->file_count = (size_t)(argc - optind);
    return 0;
}

static int parse_listen(const char *text, struct sockaddr_in *sa)
{
    char host[64], q[128];
    const char *colon = strrchr(text, ':');
    char *end;
    unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    if (!colon || (size_t)(colon - text) >= sizeof host || !colon[1] || *end || port > 65535)
        return wfb_usage_error("--listen needs HOST:PORT, not %s", wfb_quote(text, q, sizeof q));
    snprintf(host, sizeof host, "%.*s", (int)(colon - text), text);
    if (strcmp(host, "localhost") == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return wfb_usage_error("--listen: %s is not an IPv4 address", wfb_quote(host, q, sizeof q));
    sa->sin_port = htons((uint16_t)port);
    return 0;
}

/* One endpoint per contract, over all definitions; a contract served by two is an error. */
static int add_endpoints(wfb_server *srv, size_t di, const char *file)
{
    for (size_t i = 0; i < srv->def_op_counts[di]; i++) {
        const wfm_msg_op *op = &srv->def_ops[di][i];
        wfb_endpoint *ep = NULL;
        for (size_t k = 0; k < srv->endpoint_count && !ep; k++)
            if (strcmp(srv->endpoints[k].contract, op->contract) == 0)
                ep = &srv->endpoints[k];
        if (ep && ep->def != srv->defs[di])
            return wfb_error("%s: contract %s is served by another definition too", file,
                             op->contract);
        if (!ep) {
            wfb_endpoint *grown =
                wf_realloc(srv->endpoints, (srv->endpoint_count + 1) * sizeof *grown);
            if (!grown)
                return wfb_error("out of memory");
            srv->endpoints = grown;
            ep = &srv->endpoints[srv->endpoint_count++];
            memset(ep, 0, sizeof *ep);
            snprintf(ep->contract, sizeof ep->contract, "%s", op->contract);
            snprintf(ep->contract_ns, sizeof ep->contract_ns, "%s", op->contract_ns);
            snprintf(ep->path, sizeof ep->path, "/%s", op->contract);
            ep->def = srv->defs[di];
        }
        wfm_msg_op *ops = wf_realloc((void *)ep->ops, (ep->op_count + 1) * sizeof *ops);
        if (!ops)
            return wfb_error("out of memory");
        ops[ep->op_count++] = *op; /* a shallow copy: the parameter arrays stay in def_ops */
        ep->ops = ops;
    }
    return 0;
}

static int load_all(wfb_server *srv, const serve_opts *o)
{
    srv->defs = wf_calloc(o->file_count, sizeof *srv->defs);
    srv->def_ops = wf_calloc(o->file_count, sizeof *srv->def_ops);
    srv->def_op_counts = wf_calloc(o->file_count, sizeof *srv->def_op_counts);
    if (!srv->defs || !srv->def_ops || !srv->def_op_counts)
        return wfb_error("out of memory");
    for (size_t i = 0; i < o->file_count; i++) {
        wf_error err = WF_ERROR_INIT;
        srv->def_count = i + 1;
        if (wfm_runtime_load(srv->rt, o->files[i], &srv->defs[i], NULL, &err) != WF_OK ||
            wfm_msg_ops(srv->defs[i], &srv->def_ops[i], &srv->def_op_counts[i], &err) != WF_OK)
            return wfb_report_in_file(&err, o->files[i]);
        if (!srv->def_op_counts[i])
            return wfb_error("%s: the workflow has no Receive activity: nothing to serve",
                             o->files[i]);
        int rc = add_endpoints(srv, i, o->files[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* Every CorrelatesOn name is promoted, so that content correlation can query the store. */
static int open_store(wfb_server *srv, const serve_opts *o, const char ***promote)
{
    size_t n = 0, cap = 0;
    for (size_t d = 0; d < srv->def_count; d++)
        cap += srv->def_op_counts[d];
    *promote = wf_calloc(cap + 1, sizeof **promote);
    if (!*promote)
        return wfb_error("out of memory");
    for (size_t d = 0; d < srv->def_count; d++)
        for (size_t i = 0; i < srv->def_op_counts[d]; i++)
            if (srv->def_ops[d][i].correlates_on)
                (*promote)[n++] = srv->def_ops[d][i].correlates_on;
    wfb_durable_cfg cfg = {o->store, false, o->durability, *promote, n};
    wf_error err = WF_ERROR_INIT;
    if (wfb_durable_open(&cfg, srv->rt, &srv->store, &srv->host, &err) != WF_OK)
        return wfb_report(&err);
    return 0;
}

/* Thousands of clients at once need as many descriptors: raise the soft limit to the hard
 * one (Debian's default soft limit, 1,024, would refuse the 1,001st connection). */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int start_http(wfb_server *srv, const serve_opts *o, const struct sockaddr_in *sa)
{
    raise_fd_limit();
    /* poll(), not epoll: libmicrohttpd 0.9.75's MHD_quiesce_daemon races a worker that took
     * the listen socket out of its epoll set at the connection limit, and aborts the process
     * ("Failed to remove listen FD from epoll set") on the SIGTERM that follows a flood. */
    srv->daemon = MHD_start_daemon(
        MHD_USE_POLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
        wfb_http_request, srv, MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
        MHD_OPTION_NOTIFY_COMPLETED, wfb_http_completed, srv, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)(o->timeout ? o->timeout : 10), MHD_OPTION_CONNECTION_LIMIT, 4000u,
        MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
    if (!srv->daemon)
        return wfb_error("cannot listen on %s (in use, or not an address of this machine)",
                         o->listen);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa->sin_addr, host, sizeof host);
    snprintf(srv->base_url, sizeof srv->base_url, "http://%s:%u", host,
             info ? (unsigned)info->port : (unsigned)ntohs(sa->sin_port));
    for (size_t i = 0; i < srv->endpoint_count; i++) {
        char url[512];
        snprintf(url, sizeof url, "%s%s", srv->base_url, srv->endpoints[i].path);
        if (o->json)
            wfb_print_json(json_pack("{s:s, s:o}", "status", "listening", "url", wf_jsonw_str(url)));
        else
            printf("listening: %s\n", url);
    }
    fflush(stdout);
    return 0;
}

static void server_fini(wfb_server *srv)
{
    if (srv->daemon) {
        MHD_socket s = MHD_quiesce_daemon(srv->daemon); /* no new connections */
        (void)s;
        wfb_dispatch_drain(srv);
        MHD_stop_daemon(srv->daemon);
    }
    wfb_dispatch_stop(srv);
    wfm_host_destroy(srv->host);
    wfm_store_close(srv->store);
    for (size_t i = 0; i < srv->endpoint_count; i++)
        wf_free((void *)srv->endpoints[i].ops);
    wf_free(srv->endpoints);
    for (size_t i = 0; i < srv->def_count; i++) {
        wfm_msg_ops_free(srv->def_ops[i], srv->def_op_counts[i]);
        wfm_definition_release(srv->defs[i]);
    }
    wf_free(srv->def_ops);
    wf_free(srv->def_op_counts);
    wf_free(srv->defs);
    pthread_mutex_destroy(&srv->lock);
    pthread_cond_destroy(&srv->wake);
    pthread_cond_destroy(&srv->idle);
}

static int serve(const serve_opts *o, wf_libpath *libpath)
{
    struct sockaddr_in sa;
    int rc = parse_listen(o->listen, &sa);
    if (rc)
        return rc;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* every thread started below inherits it */
    signal(SIGPIPE, SIG_IGN); /* a client gone mid-reply is an error return, not a death */
    wfb_server srv = {0};
    pthread_mutex_init(&srv.lock, NULL);
    pthread_cond_init(&srv.wake, NULL);
    pthread_cond_init(&srv.idle, NULL);
    const char **promote = NULL;
    wfm_runtime_opts ro = WFM_RUNTIME_OPTS_INIT;
    ro.worker_count = (unsigned)o->workers;
    ro.libpath = libpath;
    wf_error err = WF_ERROR_INIT;
    if (wfm_runtime_create(&ro, &srv.rt, &err) != WF_OK ||
        wfb_interop_register(wfm_runtime_catalogue(srv.rt), &err) != WF_OK)
        rc = wfb_report(&err);
    srv.types = srv.rt ? wfm_runtime_types(srv.rt) : NULL;
    if (rc == 0)
        rc = load_all(&srv, o);
    if (rc == 0 && o->store)
        rc = open_store(&srv, o, &promote);
    if (rc == 0 && wfb_dispatch_start(&srv, o->store ? 4 : 1, &err) != WF_OK)
        rc = wfb_report(&err);
    if (rc == 0)
        rc = start_http(&srv, o, &sa);
    int sig;
    if (rc == 0)
        sigwait(&stop, &sig);
    server_fini(&srv);
    wf_free(promote);
    wfm_runtime_destroy(srv.rt);
    pthread_sigmask(SIG_UNBLOCK, &stop, NULL);
    return rc;
}

int wfb_cmd_serve(int argc, char **argv)
{
    wfb_verb_begin("serve");
    serve_opts o = {.durability = WFM_DURABILITY_FULL};
    int rc = parse_opts(argc, argv, &o);
    if (rc < 0)
        return 0; /* --help */
    if (rc)
        return rc;
    wf_libpath *libpath = NULL;
    wf_error err = WF_ERROR_INIT;
    if (wfb_libpath(o.lib_path, &libpath, &err) != WF_OK)
        return wfb_report(&err);
    rc = serve(&o, libpath);
    wf_libpath_destroy(libpath);
    return rc;
}
