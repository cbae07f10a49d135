# raid/member: the member interface and its backends (files and block
# devices, NBD exports, their pools of connections and connecting to
# them), superblock I/O, examining a member, retiring devices that
# left, undoing a refused create.
noinst_LTLIBRARIES += %reldir%/libmember.la
%canon_reldir%_libmember_la_SOURCES = \
	%reldir%/create-undo.c %reldir%/create-undo.h \
	%reldir%/device-lock.c %reldir%/device-lock.h \
	%reldir%/examine.c %reldir%/examine.h \
	%reldir%/hole-memo.c %reldir%/hole-memo.h \
	%reldir%/member.c %reldir%/member.h \
	%reldir%/member-file.c \
	%reldir%/member-nbd.c \
	%reldir%/nbd-connect.c %reldir%/nbd-connect.h \
	%reldir%/nbd-pool.c %reldir%/nbd-pool.h \
	%reldir%/retired.c %reldir%/retired.h \
	%reldir%/superblock-io.c %reldir%/superblock-io.h \
	%reldir%/zero-superblock.c
%canon_reldir%_libmember_la_CPPFLAGS = $(MEMBER_INCLUDES)
%canon_reldir%_libmember_la_CFLAGS = $(ENGINE_CFLAGS) $(LIBNBD_CFLAGS)

check_PROGRAMS += \
	%reldir%/test-device-lock \
	%reldir%/test-hole-memo \
	%reldir%/test-nbd-give-up \
	%reldir%/test-retired
%canon_reldir%_test_device_lock_CPPFLAGS = $(MEMBER_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_device_lock_LDADD = raid/libraid.la
%canon_reldir%_test_hole_memo_CPPFLAGS = $(MEMBER_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_hole_memo_LDADD = raid/libraid.la
%canon_reldir%_test_nbd_give_up_CPPFLAGS = $(MEMBER_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_nbd_give_up_LDADD = raid/libraid.la
%canon_reldir%_test_retired_CPPFLAGS = $(MEMBER_INCLUDES) $(TEST_INCLUDES)
%canon_reldir%_test_retired_LDADD = raid/libraid.la
