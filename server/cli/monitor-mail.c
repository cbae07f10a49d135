/* nbdraid monitor --mail ADDR: mail the events that need an admin, as
 * mdadm --monitor does for MAILADDR: Fail, FailSpare, DegradedArray,
 * SparesMissing and TestMessage in mdadm, and nbdraid's FailedArray,
 * DeviceDisappeared and MismatchLocated beside them.  The message is
 * handed to sendmail -t (NBDRAID_SENDMAIL, else /usr/sbin/sendmail),
 * which every MTA provides.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "monitor-mail.h"

void
mail_event (const char *addr, const char *event, const char *array,
            const char *member, const char *detail)
{
  const char *sendmail = getenv ("NBDRAID_SENDMAIL");
  char host[256] = "localhost", cmd[4200];
  FILE *fp;
  int status;

  if (!sendmail || !sendmail[0])
    sendmail = "/usr/sbin/sendmail";
  gethostname (host, sizeof host - 1);
  snprintf (cmd, sizeof cmd, "%s -t", sendmail);
  fp = popen (cmd, "w");
  if (!fp) {
    fprintf (stderr, "nbdraid: monitor: mail to %s: %s: %s\n", addr,
             sendmail, strerror (errno));
    return;
  }
  fprintf (fp, "From: nbdraid monitoring <root>\n"
           "To: %s\n"
           "Subject: %s event on %s:%s\n\n"
           "This is an automatically generated mail message from nbdraid\n"
           "running on %s\n\n"
           "A %s event had been detected on array %s.\n",
           addr, event, array, host, host, event, array);
  if (member[0])
    fprintf (fp, "\nIt could be related to component device %s.\n",
             member);
  if (detail[0])
    fprintf (fp, "\n%s\n", detail);
  fprintf (fp, "\nnbdraid status and nbdraid detail tell more.\n");
  status = pclose (fp);
  if (status == -1)
    fprintf (stderr, "nbdraid: monitor: mail to %s: %s -t: %s\n", addr,
             sendmail, strerror (errno));
  else if (WIFSIGNALED (status))
    fprintf (stderr, "nbdraid: monitor: mail to %s: %s -t killed by signal "
             "%d\n", addr, sendmail, WTERMSIG (status));
  else if (WEXITSTATUS (status) != 0)
    fprintf (stderr, "nbdraid: monitor: mail to %s: %s -t failed (exit "
             "%d)\n", addr, sendmail, WEXITSTATUS (status));
}
