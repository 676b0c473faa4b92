/* Service-manager notifications (sd_notify): READY=1 once a graph serves,
 * RELOADING=1 during a reload, STOPPING=1 at shutdown. Without libsystemd
 * at build time, or when not started by systemd, these do nothing. */
#ifndef SS_SERVER_NOTIFY_H
#define SS_SERVER_NOTIFY_H

/* Sends one state string such as "READY=1"; failures are logged at debug
 * level and otherwise ignored (notification is advisory). */
void ss_notify(const char *state);

#endif
