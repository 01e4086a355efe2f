# Sourced by scripts/test (after _graphviz.sh): install the Debian packages the remote-execution tests start for real
# (slurm-wlm + munge for scripts/wrap/slurm, openssh-server + rsync for scripts/wrap/ssh) when missing.
# Quiet and idempotent: a machine that has them runs no apt at all; apt-get update runs at most once.
# Best effort: without root or apt (a developer laptop) nothing is installed and those tests skip with the
# reason. OWED_NO_ENGINES=1 skips the step.
_owed_engines() {
  [ "${OWED_NO_ENGINES:-}" = 1 ] && return 0
  local want=() bin pkg
  for pair in srun:slurm-wlm slurmctld:slurm-wlm munged:munge sshd:openssh-server rsync:rsync; do
    bin=${pair%%:*}; pkg=${pair#*:}
    if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
      case " ${want[*]-} " in *" $pkg "*) ;; *) want+=("$pkg") ;; esac
    fi
  done
  [ ${#want[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test: ${want[*]} missing (not root or no apt-get): the Slurm/ssh engine tests will skip" >&2
    return 0
  fi
  echo "scripts/test: installing ${want[*]} for the Slurm/ssh engine tests" >&2
  local log; log=$(mktemp)
  # policy-rc.d 101: the packages' postinst must not start services here; the tests start their own.
  local policy=/usr/sbin/policy-rc.d made_policy=
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1; fi
  # apt-get update once: not again when the package lists are fresh (scripts/_graphviz.sh may just have run it).
  local fresh=
  find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null | grep -q . && fresh=1
  if ! { { [ -n "$fresh" ] || DEBIAN_FRONTEND=noninteractive apt-get update -qq; } &&
         DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}"; } >"$log" 2>&1; then
    echo "scripts/test: installing ${want[*]} failed (the engine tests will skip); last lines:" >&2
    tail -n 5 "$log" >&2
  fi
  [ -n "$made_policy" ] && rm -f "$policy"
  rm -f "$log"
  return 0
}
_owed_engines
