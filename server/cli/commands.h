/* nbdraid: the admin tool's subcommands. */
#ifndef NBDRAID_COMMANDS_H
#define NBDRAID_COMMANDS_H

/* Each returns the process exit status. */
int cmd_create (int argc, char **argv);
int cmd_examine (int argc, char **argv);
int cmd_scan (int argc, char **argv);
int cmd_zero_superblock (int argc, char **argv);
/* The verbs that talk to a running array's control socket. */
int cmd_admin (int argc, char **argv);
/* What such a verb takes after CONFIG, for usage lines; NULL if verb
 * is not one. */
const char *admin_verb_args (const char *verb);
/* nbdraid monitor. */
int cmd_monitor (int argc, char **argv);

#endif
