/* NameServer and broker addresses: "host:port" and the "host:port;host:port" lists that -n and
 * the NAMESRV_ADDR environment variable carry (mqadmin's format). Pure functions. */
#ifndef NSA_ADDR_H
#define NSA_ADDR_H

#include <stddef.h>

/* A list of addresses, in the order given, each a NUL-terminated "host:port". */
typedef struct nsa_addrs {
    char **items; /* owned */
    size_t len;
} nsa_addrs_t;

/* Splits a list at ';' (mqadmin's separator), trims blanks around each entry and drops empty
 * ones. Every entry must be a valid address (nsa_addr_split). Returns 0, or -1 with a reason
 * in err ("no address in ''", "bad address 'x': ..."); *out is then empty. */
int nsa_addrs_parse(nsa_addrs_t *out, const char *list, char *err, size_t errlen);

/* Frees the list; it is empty afterwards. */
void nsa_addrs_free(nsa_addrs_t *a);

/* Splits "host:port" (the port after the last ':', as Java's RemotingHelper does) or
 * "[v6-address]:port" into host (without brackets) and a port 1..65535. Returns 0, or -1 with
 * a reason in err. */
int nsa_addr_split(const char *addr, char *host, size_t hostcap, int *port, char *err,
                   size_t errlen);

#endif
