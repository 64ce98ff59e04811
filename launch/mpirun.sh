#!/usr/bin/env bash
# Runs a program (normally build/launch/seed) under Open MPI's mpirun with
# defaults that suit seed's ranks (docs/architecture.md, "Ranks under mpirun"):
#   - --oversubscribe when the slots (this machine's cores, or the
#     hostfile's slots) are fewer than the ranks, as on a 2-core laptop;
#   - --mca mpi_yield_when_idle 1: a rank waiting in MPI gives its core
#     away instead of spinning on it (idle draft ranks, oversubscription);
#   - --bind-to none by default (small machines, ranks with several
#     threads); -b core binds each rank to a core, for clusters;
#   - OMP_NUM_THREADS exported to every rank (default 1 when oversubscribed,
#     so that ranks' libtorch threads do not fight over cores);
#   - --allow-run-as-root only when run as root (containers, CI).
# It prints the mpirun command it runs and exits with mpirun's status. A
# SIGINT, SIGTERM or SIGHUP to it goes on to mpirun, which ends the ranks
# without a word (and may drop their last output); the script then says so
# and exits 128 + the signal (130, 143, 129).
#
# Usage: launch/mpirun.sh -n RANKS [-H HOSTFILE] [-b none|core] [-t THREADS]
#                         [-m "MORE MPIRUN OPTIONS"] [--] PROGRAM [ARGS...]
# Example: launch/mpirun.sh -n 4 -- build/launch/seed --threads 1 run ... --tp 2
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-0}"; }

ranks="" hostfile="" bind="none" threads="" extra=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) ranks="$2"; shift 2 ;;
    -H) hostfile="$2"; shift 2 ;;
    -b) bind="$2"; shift 2 ;;
    -t) threads="$2"; shift 2 ;;
    -m) extra="$2"; shift 2 ;;
    -h|--help) usage 0 ;;
    --) shift; break ;;
    -*) echo "mpirun.sh: unknown option $1" >&2; usage 2 ;;
    *) break ;;
  esac
done
[[ -n "$ranks" && $# -gt 0 ]] || { echo "mpirun.sh: -n RANKS and a program are required" >&2; usage 2; }
[[ "$ranks" =~ ^[1-9][0-9]*$ ]] || { echo "mpirun.sh: -n wants a positive rank count, got '$ranks'" >&2; exit 2; }
[[ "$bind" == none || "$bind" == core ]] || { echo "mpirun.sh: -b is none or core, got '$bind'" >&2; exit 2; }

if [[ -n "$hostfile" ]]; then
  [[ -r "$hostfile" ]] || { echo "mpirun.sh: cannot read hostfile $hostfile" >&2; exit 2; }
  # Sum of slots=N over the hostfile's lines (a line without slots counts 1).
  slots=$(awk '!/^[[:space:]]*(#|$)/ { n = 1; for (i = 2; i <= NF; i++) if ($i ~ /^slots=/) n = substr($i, 7); s += n } END { print s + 0 }' "$hostfile")
else
  slots=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc obeys OMP_NUM_THREADS
fi

args=(-np "$ranks" --mca mpi_yield_when_idle 1 --bind-to "$bind")
[[ -n "$hostfile" ]] && args+=(--hostfile "$hostfile")
if (( slots < ranks )); then
  args+=(--oversubscribe)
  threads="${threads:-1}"
fi
[[ "$(id -u)" == 0 ]] && args+=(--allow-run-as-root)
if [[ -n "$threads" ]]; then
  export OMP_NUM_THREADS="$threads"
fi
[[ -n "${OMP_NUM_THREADS:-}" ]] && args+=(-x OMP_NUM_THREADS)
# shellcheck disable=SC2206  # -m is a list of options, split on purpose
[[ -n "$extra" ]] && args+=($extra)

echo "mpirun.sh: $ranks ranks on $slots slots: mpirun ${args[*]} $*" >&2
mpirun "${args[@]}" "$@" <&0 &
mpirun_pid=$!
interrupted=""
for signal in INT TERM HUP; do
  # shellcheck disable=SC2064  # the signal's name is fixed now, on purpose
  trap "interrupted=$signal; kill -$signal $mpirun_pid 2>/dev/null || true" "$signal"
done
# wait returns early when a trapped signal arrives; wait again for mpirun's end.
while :; do
  status=0
  wait "$mpirun_pid" || status=$?
  kill -0 "$mpirun_pid" 2>/dev/null || break
done
if [[ -n "$interrupted" ]]; then
  echo "mpirun.sh: interrupted by SIG$interrupted: mpirun ended the ranks (its exit status $status); a seed run" \
       "keeps every finished problem in its results.jsonl: finish the run with the same options and --resume" >&2
  exit $((128 + $(kill -l "$interrupted")))
fi
exit "$status"
