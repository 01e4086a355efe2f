#!/bin/bash
# A writer stand-in that tries every owner, parent and review act from inside its run (each must be refused),
# then does its real work: commit and `owed submit`. Every attempt is logged to $OWED_RUN_DIR/attempts.log as
# `<name> <exit code> <first stderr line>`.
log="$OWED_RUN_DIR/attempts.log"
try() {
  local name="$1"; shift
  "$@" >/dev/null 2>"$OWED_RUN_DIR/err"
  local code=$?
  echo "$name $code $(head -1 "$OWED_RUN_DIR/err")" >> "$log"
}
n="$OWED_NODE"
try init owed init plan.yaml
try plan owed plan plan.yaml
try rule owed rule "do it my way" --nodes "$n"
try waive owed waive "$n" ok --reason "trust me"
try defer owed defer "$n" inv --reason "later"
try approve owed approve "$n" --note "fine"
try adopt owed adopt --note "mine"
try resume owed resume "$n" --note "again"
try abandon owed abandon "$n" --note "bored"
try answer owed answer "$n" "yes"
try gc owed gc
try edit owed edit "$n" title=x --note x
try amend owed amend "$n" --writes more.txt --note x
try dispatch owed dispatch other
try merge owed merge "$n"
try sweep owed sweep
try escape owed escape "$n" --merge 1 --class missing --note x
try drive owed drive --once
try review owed review "$n" --ok --as reviewer:me --note "looks great"
try review-owner owed review "$n" --ok --as owner:me --note "override"
try evidence owed evidence "$n" ui --note "seen" --as reviewer:me
try review-scrubbed env -u OWED_RUN_ID -u OWED_ROLE -u OWED_NODE -u OWED_RAIL_TOKEN -u OWED_RUN_DIR owed review "$n" --ok --as reviewer:me --note x
try review-env-i env -i PATH="$PATH" HOME="$HOME" owed review "$n" --ok --as reviewer:me --note x
try review-forged env OWED_RAIL_TOKEN=0000 OWED_ROLE=reviewer owed review "$n" --ok --as reviewer:me --note x
try submit-other owed submit other
echo "$n v2" > "$n.txt"
git add -A && git -c user.name=w -c user.email=w@x commit -qm "$n"
owed submit "$n" > "$OWED_RUN_DIR/submit.out" 2>&1
echo "submit $?" >> "$log"
try review-after owed review "$n" --ok --as reviewer:me --note "now"
exit 0
