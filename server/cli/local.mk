# server/cli: the nbdraid command: create, examine and scan, and the
# verbs it sends to a running array's control socket.  It sees only the
# engine's public header.
bin_PROGRAMS = %reldir%/nbdraid
%canon_reldir%_nbdraid_SOURCES = \
	%reldir%/nbdraid.c \
	%reldir%/cmd-admin.c \
	%reldir%/cmd-create.c \
	%reldir%/cmd-examine.c \
	%reldir%/cmd-monitor.c \
	%reldir%/monitor-mail.c %reldir%/monitor-mail.h \
	%reldir%/cmd-scan.c \
	%reldir%/scan-args.c \
	%reldir%/scan-arrays.c \
	%reldir%/scan-print.c %reldir%/scan.h \
	%reldir%/cmd-zero.c \
	%reldir%/control-client.c %reldir%/control-client.h \
	%reldir%/commands.h \
	server/json/json.c server/json/json.h
%canon_reldir%_nbdraid_CPPFLAGS = -I$(srcdir)/raid/include \
	-I$(srcdir)/server/json
%canon_reldir%_nbdraid_LDADD = raid/libraid.la
