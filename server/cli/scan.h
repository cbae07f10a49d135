/* nbdraid scan: what its parts share.  cmd-scan.c drives them:
 * scan-args.c turns the arguments into devices, scan-arrays.c groups
 * the devices' superblocks into arrays (nested ones included) and
 * scan-print.c prints each array as a config, or as JSON.
 */
#ifndef NBDRAID_SCAN_H
#define NBDRAID_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "raid.h"

/* ---- scan-args.c ------------------------------------------------- */

/* The devices the arguments name, each once. */
struct scan_paths {
  char **path;
  size_t n;
};

/* Expand the arguments: a file or block device (made absolute: the
 * directory resolved, the name kept, so /dev/disk/by-id/NAME stays), a
 * directory's regular files and block devices (sorted), the same of a
 * glob's matches, an NBD URI as given.  One device named twice (a
 * symlink, another spelling) is kept under its first name.  An argument
 * that names nothing is reported on stderr and skipped.  0, or -1 out
 * of memory. */
int scan_args_expand (int argc, char **argv, struct scan_paths *paths);
void scan_paths_free (struct scan_paths *paths);

/* ---- scan-arrays.c ----------------------------------------------- */

/* Where a device goes in its array's config. */
enum scan_place {
  SCAN_MEMBER,                  /* member = PATH, in its role */
  SCAN_SPARE,                   /* spare = PATH */
  SCAN_STALE,                   /* a comment: another device holds its
                                   role with more events */
  SCAN_DUPLICATE,               /* a comment: another device holds its
                                   role with as many events (a copy) */
  SCAN_FAULTY,                  /* a comment: the superblocks record it
                                   as failed */
};

struct scan_array;

/* A device holding an md superblock: a disk or file, or a whole array
 * that is the member of another (nested arrays). */
struct scan_device {
  char *path;                   /* NULL for an array */
  struct scan_array *inner;     /* the array it is, or NULL */
  struct raid_member_info info;
  enum scan_place place;
  unsigned role;                /* by the array's freshest superblock */
};

/* The devices of one array UUID, placed as assembly would place them. */
struct scan_array {
  struct scan_device **devices; /* in the order scanned */
  size_t ndevices;
  const struct raid_member_info *ref;   /* the freshest superblock */
  char name[33];                /* md's set name, less a "host:" prefix */
  struct scan_device **members; /* by role (ref->raid_disks): NULL for
                                   none */
  /* In the config of another array, as its member: the array and the
   * name of its [array NAME] section there (scan-print.c gives it). */
  struct scan_array *outer;
  char group[33];
  bool placed;                  /* devices placed since the last one
                                   joined */
};

struct scan_set {
  struct scan_device **devices;
  size_t ndevices;
  struct scan_array **arrays;
  size_t narrays;
};

/* Read spec's superblock and keep the device.  One that holds none is
 * passed over silently; one whose superblock is damaged or that cannot
 * be read, with a line on stderr.  0, or -1 out of memory. */
int scan_add_device (struct scan_set *set, const char *spec);

/* Group the devices into arrays, place them, and look inside each
 * array for the superblock of an array it is a member of, repeatedly,
 * so stacks are found whole.  0, or -1 out of memory. */
int scan_find_arrays (struct scan_set *set);

/* Whether device d of array a lags the array: more than one event
 * behind its freshest superblock, as assembly judges. */
bool scan_is_stale (const struct scan_array *a, const struct scan_device *d);

/* Whether array a needs degraded=true to start: a role the
 * superblocks expect a device in has none, or only a stale one. */
bool scan_needs_degraded (const struct scan_array *a);

void scan_set_free (struct scan_set *set);

/* ---- scan-print.c ------------------------------------------------ */

/* Print the config of array a, its nested arrays included (their
 * section names given first), beginning with its [array] line. */
void scan_print_config (FILE *fp, struct scan_array *a);

/* Print arrays[0..n-1] as a JSON list. */
void scan_print_json (FILE *fp, struct scan_array *const *arrays, size_t n);

#endif
