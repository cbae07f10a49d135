#!/usr/bin/env bash
# The engine's layers call only down: every function an object in one
# folder calls from another engine folder is defined in a folder below
# it (Makefile.am: format <- member <- io <- array <- levels, admin <-
# assemble), so no call cycle crosses folders.  The include paths keep
# headers in order; this checks the calls, from the objects' symbols.
set -eu
: "${abs_top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
command -v nm > /dev/null || { echo "SKIP: nm missing"; exit 77; }
cd "$abs_top_builddir/raid"

# The folders each folder may call into, besides itself.
declare -A below=(
  [format]=""
  [member]="format"
  [io]="format member"
  [array]="format member io"
  [levels]="format member io array"
  [admin]="format member io array"
  [assemble]="format member io array levels admin"
)

# symbol -> folder that defines it
declare -A home=()
for folder in "${!below[@]}"; do
  objs=("$folder"/.libs/*.o)
  [ -e "${objs[0]}" ] || { echo "FAIL: no objects in raid/$folder"; exit 1; }
  while read -r sym; do
    home[$sym]=$folder
  done < <(nm --defined-only -g "${objs[@]}" | awk 'NF == 3 { print $3 }')
done

bad=0
for folder in "${!below[@]}"; do
  while read -r obj sym; do
    to=${home[$sym]:-}
    [ -n "$to" ] && [ "$to" != "$folder" ] || continue
    case " ${below[$folder]} " in
      *" $to "*) ;;
      *) echo "FAIL: raid/$folder/${obj##*/} calls $sym, in raid/$to," \
              "above it"
         bad=1 ;;
    esac
  done < <(for o in "$folder"/.libs/*.o; do
             nm --undefined-only "$o" | awk -v o="$o" '{ print o, $NF }'
           done)
done
[ "$bad" -eq 0 ] || exit 1
echo "ok: ${#home[@]} engine functions, every call between folders goes down"
