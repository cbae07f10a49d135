/* nbdraid: the owner record's encoding (owner.h). */
#include <config.h>

#include <string.h>

#include <isa-l/crc.h>

#include "le.h"
#include "owner.h"

/* Field offsets within the record's sector; the CRC32C of the first
 * 508 bytes closes it, so a torn or foreign sector is not a record. */
enum {
  OW_MAGIC = 0,                 /* 16 bytes */
  OW_UUID = 16,
  OW_OWNER_ID = 32,
  OW_SEQ = 40,
  OW_TIME_MS = 48,
  OW_INTERVAL_MS = 56,
  OW_STATE = 60,
  OW_PID = 64,
  OW_HOST = 72,                 /* 64 bytes, NUL-padded */
  OW_CRC = OWNER_BYTES - 4,
};

static const char magic[16] = "nbdraid owner v1";

_Static_assert (OWNER_BLOCK_OFFSET + OWNER_BYTES <= 4096,
                "the record lies within the superblock block");
_Static_assert (OW_HOST + 64 <= OW_CRC, "the fields fit the sector");

void
owner_encode (const struct owner_record *rec, uint8_t *sb_block)
{
  uint8_t *b = sb_block + OWNER_BLOCK_OFFSET;

  memset (b, 0, OWNER_BYTES);
  memcpy (b + OW_MAGIC, magic, sizeof magic);
  memcpy (b + OW_UUID, rec->set_uuid, 16);
  le64_put (b + OW_OWNER_ID, rec->owner_id);
  le64_put (b + OW_SEQ, rec->seq);
  le64_put (b + OW_TIME_MS, rec->time_ms);
  le32_put (b + OW_INTERVAL_MS, rec->interval_ms);
  le32_put (b + OW_STATE, rec->state);
  le32_put (b + OW_PID, rec->pid);
  strncpy ((char *) b + OW_HOST, rec->host, 64);
  le32_put (b + OW_CRC, crc32_iscsi (b, OW_CRC, 0));
}

int
owner_decode (const uint8_t *sb_block, struct owner_record *rec)
{
  const uint8_t *b = sb_block + OWNER_BLOCK_OFFSET;

  if (memcmp (b + OW_MAGIC, magic, sizeof magic) != 0 ||
      le32_get (b + OW_CRC) != crc32_iscsi ((uint8_t *) b, OW_CRC, 0))
    return -1;
  memset (rec, 0, sizeof *rec);
  memcpy (rec->set_uuid, b + OW_UUID, 16);
  rec->owner_id = le64_get (b + OW_OWNER_ID);
  rec->seq = le64_get (b + OW_SEQ);
  rec->time_ms = le64_get (b + OW_TIME_MS);
  rec->interval_ms = le32_get (b + OW_INTERVAL_MS);
  rec->state = le32_get (b + OW_STATE);
  rec->pid = le32_get (b + OW_PID);
  memcpy (rec->host, b + OW_HOST, 64);
  rec->host[64] = '\0';
  return 0;
}

bool
owner_fits (uint32_t max_dev)
{
  return max_dev <= OWNER_MAX_DEV;
}
