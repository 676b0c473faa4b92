#include "server/notify.h"

#include <string.h>

#include "core/log.h"
#include "server/ss_server_config.h"

#if SS_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

void ss_notify(const char *state)
{
#if SS_HAVE_SYSTEMD
        int rc = sd_notify(0, state);
        if (rc < 0)
                ss_log_debug("notify", "sd_notify(%s) failed: %s", state, strerror(-rc));
        else if (rc > 0)
                ss_log_debug("notify", "sent %s", state);
#else
        ss_log_debug("notify", "built without libsystemd; not sending %s", state);
#endif
}
