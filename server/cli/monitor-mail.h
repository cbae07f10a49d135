/* nbdraid monitor --mail: events by mail (monitor-mail.c). */
#ifndef NBDRAID_MONITOR_MAIL_H
#define NBDRAID_MONITOR_MAIL_H

/* Mail one event to addr through sendmail, in mdadm's words.  A
 * sendmail that fails is reported on stderr; the monitor goes on. */
void mail_event (const char *addr, const char *event, const char *array,
                 const char *member, const char *detail);

#endif
