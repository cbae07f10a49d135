/* nbdkit-raid-plugin: logging what is not an error (notice.c). */
#ifndef NBDRAID_NOTICE_H
#define NBDRAID_NOTICE_H

/* Call in .get_ready: nbdkit forks into the background after it. */
void notice_start (void);
/* Log msg as "info" or "warning" ("what"). */
void notice (const char *what, const char *msg);
/* Log msg as an error: nbdkit_error's, or the journal's with its level. */
void notice_error (const char *msg);

#endif
