# raid/admin: what the control plane asks of a running array: status,
# fail, remove, add, replace, re-add, readonly, grow (size, array size, mirror
# count, level, RAID5/6 restriping, chunk, layout); spares shared by nested arrays; housekeeping.
noinst_LTLIBRARIES += %reldir%/libadmin.la
%canon_reldir%_libadmin_la_SOURCES = \
	%reldir%/admin.c \
	%reldir%/array-size.c \
	%reldir%/grow.c \
	%reldir%/grow-devices.c \
	%reldir%/grow-shape.c \
	%reldir%/maintenance.c \
	%reldir%/readonly.c \
	%reldir%/refuse.c %reldir%/refuse.h \
	%reldir%/reshape-start.c %reldir%/reshape-start.h \
	%reldir%/takeover.c %reldir%/takeover.h \
	%reldir%/takeover-mirrors.c \
	%reldir%/shared-spares.c %reldir%/shared-spares.h
%canon_reldir%_libadmin_la_CPPFLAGS = $(ADMIN_INCLUDES)
%canon_reldir%_libadmin_la_CFLAGS = $(ENGINE_CFLAGS)

check_PROGRAMS += %reldir%/test-grow
%canon_reldir%_test_grow_SOURCES = %reldir%/test-grow.c $(TEST_ARRAY)
%canon_reldir%_test_grow_CPPFLAGS = $(ADMIN_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_grow_LDADD = raid/libraid.la

check_PROGRAMS += %reldir%/test-takeover
%canon_reldir%_test_takeover_SOURCES = %reldir%/test-takeover.c $(TEST_ARRAY)
%canon_reldir%_test_takeover_CPPFLAGS = $(ADMIN_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_takeover_LDADD = raid/libraid.la

check_PROGRAMS += %reldir%/test-reshape
%canon_reldir%_test_reshape_SOURCES = %reldir%/test-reshape.c $(TEST_ARRAY)
%canon_reldir%_test_reshape_CPPFLAGS = $(ADMIN_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_reshape_LDADD = raid/libraid.la
