/* Open connections counted per client address, for the per-client limit
 * (client_connections). An IPv4 address and its IPv4-mapped IPv6 form are
 * the same client. Loop thread only. */
#ifndef SS_SERVER_CLIENTS_H
#define SS_SERVER_CLIENTS_H

#include <stdbool.h>
#include <sys/socket.h>

struct ss_clients;

/* Returns an empty table, or NULL when out of memory. */
struct ss_clients *ss_clients_new(void);
void ss_clients_free(struct ss_clients *t);

/* Open connections from a's address (0 for an address of another family). */
unsigned ss_clients_count(const struct ss_clients *t, const struct sockaddr *a);
/* Counts one more connection from a; false when out of memory (then the
 * connection is not counted, and its removal must be skipped too). */
bool ss_clients_add(struct ss_clients *t, const struct sockaddr *a);
/* Counts one connection from a less. */
void ss_clients_remove(struct ss_clients *t, const struct sockaddr *a);

/* True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
bool ss_addr_is_loopback(const struct sockaddr *a);

#endif
