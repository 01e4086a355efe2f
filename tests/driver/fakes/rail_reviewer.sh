#!/bin/bash
# A reviewer stand-in that first tries what a reviewer run may not do (submit, review another node, review as
# another principal, approve), then records its review as $OWED_REVIEWER. Attempts go to $OWED_RUN_DIR/attempts.log.
log="$OWED_RUN_DIR/attempts.log"
try() {
  local name="$1"; shift
  "$@" >/dev/null 2>"$OWED_RUN_DIR/err"
  local code=$?
  echo "$name $code $(head -1 "$OWED_RUN_DIR/err")" >> "$log"
}
n="$OWED_NODE"
other=b; [ "$n" = b ] && other=a
try submit owed submit "$n"
try review-other-node owed review "$other" --ok --as "$OWED_REVIEWER" --note x
try review-other-principal owed review "$n" --ok --as reviewer:someone-else --note x
try approve owed approve "$n" --note x
try rule owed rule "x" --nodes "$n"
try review owed review "$n" --ok --rank "$OWED_REVIEW_RANK" --as "$OWED_REVIEWER" --candidate "$OWED_CANDIDATE" --note "read the diff"
exit 0
