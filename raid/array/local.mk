# raid/array: the array core: its state and requests' entry points,
# running batches on members, health, md's clean and dirty states, the
# write-intent bitmap, background jobs, arrays as members of others.
noinst_LTLIBRARIES += %reldir%/libarray.la
%canon_reldir%_libarray_la_SOURCES = \
	%reldir%/array.c %reldir%/array.h \
	%reldir%/bitmap.c %reldir%/bitmap.h \
	%reldir%/dirty.c \
	%reldir%/health.c \
	%reldir%/job.c %reldir%/job.h \
	%reldir%/job-pieces.c \
	%reldir%/job-rebuild.c \
	%reldir%/job-reshape.c \
	%reldir%/job-sync.c \
	%reldir%/journal.c %reldir%/journal.h \
	%reldir%/journal-cache.c %reldir%/journal-cache.h \
	%reldir%/journal-replay.c %reldir%/journal-replay.h \
	%reldir%/journal-write.c \
	%reldir%/member-array.c \
	%reldir%/multihost.c \
	%reldir%/ppl.c %reldir%/ppl.h \
	%reldir%/ppl-write.c \
	%reldir%/requests.c \
	%reldir%/reshape-copies.c \
	%reldir%/reshape-io.c %reldir%/reshape.h \
	%reldir%/write-behind.c %reldir%/write-behind.h
%canon_reldir%_libarray_la_CPPFLAGS = $(ARRAY_INCLUDES)
%canon_reldir%_libarray_la_CFLAGS = $(ENGINE_CFLAGS)

check_PROGRAMS += %reldir%/test-ppl %reldir%/test-journal-replay \
	%reldir%/test-journal-cache
%canon_reldir%_test_journal_cache_SOURCES = %reldir%/test-journal-cache.c
%canon_reldir%_test_journal_cache_CPPFLAGS = $(ARRAY_INCLUDES) \
	$(TEST_INCLUDES)
%canon_reldir%_test_journal_cache_LDADD = raid/libraid.la
%canon_reldir%_test_journal_replay_SOURCES = %reldir%/test-journal-replay.c
%canon_reldir%_test_journal_replay_CPPFLAGS = $(ARRAY_INCLUDES) \
	$(TEST_INCLUDES)
%canon_reldir%_test_journal_replay_LDADD = raid/libraid.la
%canon_reldir%_test_ppl_SOURCES = %reldir%/test-ppl.c $(TEST_ARRAY)
%canon_reldir%_test_ppl_CPPFLAGS = $(ARRAY_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_ppl_LDADD = raid/libraid.la
