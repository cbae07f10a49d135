/* nbdkit-raid-plugin: arrays of one server that share a spare-group
 * lend each other their spares, as mdadm --monitor moves a spare from
 * one array of a spare-group to another that lost a disk and has none.
 *
 * Each array's engine belongs to its own control thread, so a spare
 * moves in steps, each on the thread of the array it touches: the
 * array short of a spare says so (wants_spare); an array with a free
 * spare in its group removes it, drops its config line and hands the
 * path over (incoming); the array short of one wipes the old
 * superblock (once the lender has closed the device) and adds it,
 * which writes its config line.  If that fails, the spare goes back.
 * For the second or two between the two, the spare is on neither
 * config: after a crash there, add it again by hand.
 */
#include <config.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "arrays.h"
#include "notice.h"
#include "spare-groups.h"

/* The incoming slots. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* How many times a spare handed over is tried before it goes back:
 * the lender closes a removed device within a second or two. */
#define TRIES 10

static struct served *
find (struct control *c)
{
  unsigned i;

  for (i = 0; i < arrays_count (); i++)
    if (arrays_at (i)->control == c)
      return arrays_at (i);
  return NULL;
}

/* Hand path to s (from from).  False if s has one coming already. */
static bool
hand (struct served *s, struct served *from, const char *path)
{
  bool free_slot;

  pthread_mutex_lock (&lock);
  free_slot = !s->incoming;
  if (free_slot) {
    s->incoming = strdup (path);
    s->incoming_from = from;
    s->tries = 0;
  }
  pthread_mutex_unlock (&lock);
  return free_slot && s->incoming;
}

/* The spare handed to s, if any: wipe its old superblock and add it.
 * Tried again next time while the lender still holds the device; then
 * given back. */
static void
take (struct served *s, struct raid_array *a, struct raid_config *cfg)
{
  char err[1024], msg[1400], *path;
  struct served *from;

  pthread_mutex_lock (&lock);
  path = s->incoming;
  from = s->incoming_from;
  pthread_mutex_unlock (&lock);
  if (!path)
    return;
  if ((raid_zero_superblock (path, err, sizeof err) == 0 &&
       raid_admin_add (a, path, err, sizeof err) == 0 &&
       raid_config_add_spare (cfg, path, err, sizeof err) == 0) ||
      ++s->tries >= TRIES) {
    pthread_mutex_lock (&lock);
    s->incoming = NULL;
    pthread_mutex_unlock (&lock);
    if (s->tries >= TRIES) {
      bool back = from && hand (from, NULL, path);
      snprintf (msg, sizeof msg, "array %s: spare %s could not be added "
                "(%s); %s%s", cfg->name, path, err,
                back ? "it goes back to array " : "add it by hand",
                back ? from->cfg.name : "");
      notice_error (msg);
    }
    else {
      snprintf (msg, sizeof msg, "array %s: spare %s came from array %s "
                "(spare-group %s)", cfg->name, path,
                from ? from->cfg.name : "?", cfg->spare_group);
      notice ("info", msg);
      control_event (s->control, RAID_EVENT_MOVE_SPARE, cfg->name, path,
                     from ? from->cfg.name : "");
    }
    free (path);
  }
}

/* How s stands: whether it lacks a spare, and its first free one. */
static void
look (struct raid_array *a, bool *wants, char *spare, size_t len)
{
  struct raid_status *st = malloc (sizeof *st);
  unsigned i, free_spares = 0;

  *wants = false;
  spare[0] = '\0';
  if (!st)
    return;
  raid_get_status (a, st);
  for (i = 0; i < st->ndevices; i++) {
    const struct raid_device_status *d = &st->dev[i];
    if (d->role < 0 && d->state == RAID_DEV_SPARE && free_spares++ == 0)
      snprintf (spare, len, "%s", d->path);
  }
  *wants = !st->failed && !st->readonly &&
    raid_status_working (st) < st->members &&
    st->job == RAID_JOB_NONE && free_spares == 0;
  free (st);
}

/* Lend s's free spare to an array of its group that wants one. */
static void
lend (struct served *s, struct raid_array *a, struct raid_config *cfg,
      const char *spare)
{
  char err[1024], removed[4096], msg[5600];
  unsigned i;

  for (i = 0; i < arrays_count (); i++) {
    struct served *o = arrays_at (i);

    if (o == s || !o->ready || !o->loaded || !o->cfg.spare_group ||
        strcmp (o->cfg.spare_group, cfg->spare_group) != 0 ||
        !__atomic_load_n (&o->wants_spare, __ATOMIC_ACQUIRE) || o->incoming)
      continue;
    if (raid_admin_remove (a, spare, removed, sizeof removed, err,
                           sizeof err) == -1 ||
        raid_config_drop_device (cfg, removed, err, sizeof err) == -1) {
      snprintf (msg, sizeof msg, "array %s: spare %s cannot go to array "
                "%s: %s", cfg->name, spare, o->cfg.name, err);
      notice_error (msg);
      return;
    }
    __atomic_store_n (&o->wants_spare, false, __ATOMIC_RELEASE);
    if (!hand (o, s, removed))
      hand (s, NULL, removed);  /* taken meanwhile: keep it */
    snprintf (msg, sizeof msg, "array %s: spare %s goes to array %s "
              "(spare-group %s)", cfg->name, removed, o->cfg.name,
              cfg->spare_group);
    notice ("info", msg);
    return;
  }
}

void
spare_groups_tick (struct control *c, struct raid_array *a,
                   struct raid_config *cfg)
{
  struct served *s = find (c);
  char spare[256];
  bool wants;

  if (!s || !cfg->spare_group)
    return;
  take (s, a, cfg);
  look (a, &wants, spare, sizeof spare);
  __atomic_store_n (&s->wants_spare, wants, __ATOMIC_RELEASE);
  if (spare[0])
    lend (s, a, cfg, spare);
}
