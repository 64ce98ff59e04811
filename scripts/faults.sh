#!/usr/bin/env bash
# Faults at random moments of `seed run`, each followed by `seed run
# --resume` (docs/reliability.md, "Faults"). Each trial picks one fault:
#   kill-draft   SIGKILL a draft rank (launch/mpirun.sh -n 3);
#   stop-target  SIGSTOP the target rank (-n 3 --tp 1) once a result is written;
#   interrupt    SIGINT or SIGTERM to the whole run (one process, or mpirun);
#   disk-full    a file size limit (ulimit -f) below what results.jsonl needs;
# then checks (a fault that comes after the last result counts as missed)
# that the run ended within a time limit, with the fault's
# documented exit status and a message naming the rank or the file, and no
# crash; that every whole line of results.jsonl is valid (a torn last line
# is allowed: --resume drops it); and that --resume, in the same launch
# mode, exits 0 with every problem once, each equal to a clean
# single-process run's (greedy: the ranks change no token).
#
# Usage: scripts/faults.sh [TRIALS | --each]   (default 10; --each: one trial per fault)
# Environment: SEED_BIN (default build/launch/seed), FAULTS_SEED (the
# trials' random seed, printed), FAULTS_LIMIT (problems per run, default 6),
# FAULTS_DIR (work folder, default a new temporary one; kept on failure).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
seed_bin="${SEED_BIN:-$root/build/launch/seed}"
limit="${FAULTS_LIMIT:-6}"
run_timeout=240  # seconds; a clean run takes a few, so only a hang reaches it
kinds=(kill-draft stop-target interrupt disk-full)

each=0 trials=10
case "${1:-}" in
  --each) each=1; trials=${#kinds[@]} ;;
  "") ;;
  *) [[ "$1" =~ ^[1-9][0-9]*$ ]] || { echo "faults.sh: TRIALS is a positive number or --each, got '$1'" >&2; exit 2; }
     trials="$1" ;;
esac
[[ -x "$seed_bin" ]] || { echo "faults.sh: no $seed_bin (build first, or set SEED_BIN)" >&2; exit 2; }
random_seed="${FAULTS_SEED:-$(( $(date +%s) % 32768 ))}"
RANDOM="$random_seed"
work="${FAULTS_DIR:-$(mktemp -d /tmp/seed-faults.XXXXXX)}"
mkdir -p "$work"
echo "faults.sh: $trials trials, FAULTS_SEED=$random_seed, in $work"

set -m        # each background run in its own process group, SIGINT not ignored
ulimit -c 0   # a crash is caught by its exit status and message, not left as a core file
export OMP_NUM_THREADS=1

# Tree of Thoughts' 24.csv layout (as tests/launch/synthetic_game24_csv.h): rows
# 901-1000, the test split, cycle through four puzzles.
awk 'BEGIN { print "Rank,Puzzles,AMT (s),Solved rate,1-sigma Mean (s),1-sigma STD (s)"
             split("4 5 6 10|4 9 10 13|1 4 8 8|2 5 7 11", p, "|")
             for (r = 1; r <= 1000; r++) print r "," (r < 901 ? p[4] : p[(r - 901) % 4 + 1]) ",10.0,90.00%,10.0,1.0" }' \
  > "$work/24.csv"

# Greedy bfs (task.json's temperatures are 0): the same outcome in every launch mode.
# One problem at a time, so that results arrive spread over the run and a
# fault after N of them lands while the ranks still compute.
run_args=(--threads 1 run --task "$root/tasks/game24" --data "$work/24.csv" --search bfs --depth 1 --n 2 --b 1
          --engine seed --limit "$limit" --concurrency 1 --target "$root/models/zoo/tiny-target"
          --draft "$root/models/zoo/tiny-draft")

# launch MODE OUT LOG [EXTRA...]: starts `seed run` in the background (pid in $job).
# MODE: single, or np3:TP (launch/mpirun.sh -n 3 --tp TP).
launch() {
  local mode="$1" out="$2" log="$3"; shift 3
  if [[ "$mode" == single ]]; then
    env "SEED_FAULT_TRIAL=$trial_id" "$seed_bin" "${run_args[@]}" --out "$out" "$@" </dev/null >"$log" 2>&1 &
  else
    env "SEED_FAULT_TRIAL=$trial_id" "$root/launch/mpirun.sh" -n 3 -- "$seed_bin" "${run_args[@]}" \
      --tp "${mode#np3:}" --out "$out" "$@" </dev/null >"$log" 2>&1 &
  fi
  job=$!
  job_start=$SECONDS
}

# finish: waits for $job within run_timeout; sets $status (or "hang") and kills what is left of its group.
# A rank stopped ($stopped) once rank 0 ($coordinator) has ended is let go: rank
# 0 ends only after every rank's last exchange, so the stop came after the
# job's end, and mpirun would wait for ever for a rank with nothing left to do.
finish() {
  while kill -0 "$job" 2>/dev/null && (( SECONDS - job_start < run_timeout )); do
    if [[ -n "$stopped" && -n "$coordinator" ]] && ! kill -0 "$coordinator" 2>/dev/null; then
      kill -CONT "$stopped" 2>/dev/null || true
      stopped="" let_go=" (the stopped rank let go once rank 0 had ended)"
    fi
    sleep 0.2
  done
  if kill -0 "$job" 2>/dev/null; then
    status=hang
    kill -KILL -- "-$job" 2>/dev/null || true
    wait "$job" 2>/dev/null || true
  else
    status=0
    wait "$job" || status=$?
  fi
  kill -KILL -- "-$job" 2>/dev/null || true  # a rank left stopped
}

# The pid of the rank RANK of this trial's mpirun job, or nothing.
rank_pid() {
  local environ
  for environ in /proc/[0-9]*/environ; do
    if grep -qzx "SEED_FAULT_TRIAL=$trial_id" "$environ" 2>/dev/null &&
       grep -qzx "OMPI_COMM_WORLD_RANK=$1" "$environ" 2>/dev/null; then
      environ="${environ#/proc/}"; echo "${environ%/environ}"; return
    fi
  done
}

whole_lines() { if [[ -f "$1" ]]; then tr -cd '\n' <"$1" | wc -c; else echo 0; fi; }

# wait_for_moment RESULTS FIRST: until AFTER whole results are written (a
# random number from FIRST to the run's less two), then a random pause of up
# to a fifth of a second.
wait_for_moment() {
  local after=$(( $2 + RANDOM % (limit - 1 - $2) ))
  if [[ "$kind" == interrupt ]]; then
    # From the run's first line on: before it, seed has not yet set up what it says on a signal.
    while kill -0 "$job" 2>/dev/null && ! grep -q "already done" "$log_file" && (( SECONDS - job_start < run_timeout )); do
      sleep 0.05
    done
  fi
  while kill -0 "$job" 2>/dev/null && (( $(whole_lines "$1") < after )) && (( SECONDS - job_start < run_timeout )); do
    sleep 0.05
  done
  sleep "0.$(( RANDOM % 3 ))"
  moment="after $(whole_lines "$1") results"
}

# The clean run every trial's results must equal.
trial_id=clean stopped="" let_go=""
clean="$work/clean/results.jsonl"
launch single "$work/clean" "$work/clean.log"
finish
[[ "$status" == 0 ]] || { echo "faults.sh: the clean run failed ($status): $work/clean.log" >&2; exit 1; }

declare -A ran passed missed_count
failures=0
for ((t = 1; t <= trials; t++)); do
  if ((each)); then kind="${kinds[t - 1]}"; else kind="${kinds[RANDOM % ${#kinds[@]}]}"; fi
  trial_id="$$-$t"
  dir="$work/trial-$t"
  out="$dir/out"
  mkdir -p "$dir"
  extra=() first=0 stopped="" let_go=""
  case "$kind" in
    kill-draft)
      mode=np3:0 rank=$(( 1 + RANDOM % 2 ))
      fault="SIGKILL to draft rank $rank"
      # Open MPI ends the job when a rank dies, naming it; its status is the
      # rank's (128 + 9). Open MPI 5 breaks the line before "signal 9".
      expect_status='^137$' expect_message="process rank $rank with PID [0-9]+ on node [^ ]+ exited on" ;;
    stop-target)
      # Once the run is under way: rank 0 times out a rank that stops
      # answering it, not one that stops while the job starts.
      mode=np3:1 rank=1 first=1
      extra=(--rank-timeout 2000)
      fault="SIGSTOP to target rank 1 (--tp 1)"
      # Lost while the run computes; or, stopped after the last result, lost
      # at its shutdown or on its way out.
      expect_status='^3$'
      expect_message="the target group \\(ranks 1\\.\\.1\\) was lost.*leader rank 1.*(--resume|every result was written)"
      expect_message+="|the worker ranks did not all reach the end of the job within --rank-timeout" ;;
    interrupt)
      signal=$([[ $(( RANDOM % 2 )) == 0 ]] && echo INT || echo TERM)
      mode=$([[ $(( RANDOM % 2 )) == 0 ]] && echo single || echo np3:0)
      fault="SIG$signal to the run ($mode)"
      expect_status=$([[ $signal == INT ]] && echo '^130$' || echo '^143$')
      # One process names its results file; launch/mpirun.sh speaks for the ranks mpirun ended.
      expect_message="interrupted by SIG$signal: every finished problem is kept in $out/results.jsonl; .*--resume"
      [[ "$mode" == single ]] || expect_message="mpirun.sh: interrupted by SIG$signal: .*--resume" ;;
    disk-full)
      mode=single
      blocks=$(( RANDOM % ($(wc -c <"$clean") / 1024 + 1) ))
      fault="file size limit $blocks KiB"
      expect_status='^1$' expect_message="cannot write $out/(results\\.jsonl|run\\.json): File too large" ;;
  esac
  ran[$kind]=$(( ${ran[$kind]:-0} + 1 ))

  if [[ "$kind" == disk-full ]]; then
    # The limit binds every file the run writes, so its output goes through cat to the log.
    ( (ulimit -f "$blocks"; exec "$seed_bin" "${run_args[@]}" --out "$out") </dev/null 2>&1 | cat >"$dir/run.log"
      exit "${PIPESTATUS[0]}" ) &
    job=$! job_start=$SECONDS
    moment="at start"
  else
    launch "$mode" "$out" "$dir/run.log" "${extra[@]}"
    log_file="$dir/run.log"
    pid="" coordinator=""
    if [[ "$kind" == kill-draft || "$kind" == stop-target ]]; then
      # Found before the moment, so that the fault lands when it is meant to.
      while [[ -z "$pid" ]] && kill -0 "$job" 2>/dev/null; do pid=$(rank_pid "$rank"); done
      while [[ -z "$coordinator" ]] && kill -0 "$job" 2>/dev/null; do coordinator=$(rank_pid 0); done
    fi
    wait_for_moment "$out/results.jsonl" "$first"
    case "$kind" in
      kill-draft) [[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null || true ;;
      stop-target) [[ -n "$pid" ]] && kill -STOP "$pid" 2>/dev/null && stopped="$pid" || true ;;
      interrupt) kill "-$signal" "$job" 2>/dev/null || true ;;
    esac
  fi
  finish
  fault_status=$status problem="" missed=0 stopped=""
  read -r kept shape < <(python3 scripts/faults_results.py lines "$out/results.jsonl" 2>&1 || echo "0 bad")
  if [[ "$status" == 0 ]] && (( kept == limit )); then
    missed=1  # the fault came after the last result: nothing to check but the clean end
  elif [[ "$status" == hang ]]; then
    problem="no exit within ${run_timeout}s"
  elif ! [[ "$status" =~ $expect_status ]]; then
    problem="exit status $status, expected $expect_status"
  elif ! grep -Eq -- "$expect_message" "$dir/run.log"; then
    problem="no message /$expect_message/"
  elif grep -Eq 'core dumped|Segmentation fault|terminate called|internal error|ThreadSanitizer|AddressSanitizer' "$dir/run.log"; then
    problem="a crash in the log"
  elif [[ "$shape" == bad ]]; then
    problem="$(python3 scripts/faults_results.py lines "$out/results.jsonl" 2>&1)"
  fi
  if [[ -z "$problem" ]] && ((missed)); then
    compared=$(python3 scripts/faults_results.py compare "$out/results.jsonl" "$clean" 2>&1) || problem="$compared"
  elif [[ -z "$problem" ]]; then
    launch "$mode" "$out" "$dir/resume.log" --resume
    finish
    if [[ "$status" != 0 ]]; then
      problem="--resume exited $status"
    elif ! grep -q "$kept already done" "$dir/resume.log"; then
      problem="--resume did not keep the $kept whole results"
    elif ! compared=$(python3 scripts/faults_results.py compare "$out/results.jsonl" "$clean" 2>&1); then
      problem="$compared"
    fi
  fi
  if [[ -z "$problem" ]] && ((missed)); then
    missed_count[$kind]=$(( ${missed_count[$kind]:-0} + 1 ))
    echo "trial $t/$trials: $kind: $fault $moment: missed: the run had finished, with results equal to the clean run's$let_go"
    rm -rf "$dir"
  elif [[ -z "$problem" ]]; then
    passed[$kind]=$(( ${passed[$kind]:-0} + 1 ))
    echo "trial $t/$trials: $kind: $fault $moment: exit $fault_status, $kept kept ($shape), resumed to $limit equal results"
    rm -rf "$dir"
  else
    failures=$(( failures + 1 ))
    echo "trial $t/$trials: $kind: $fault $moment: FAILED: $problem (logs in $dir)"
  fi
done

echo "faults.sh: $(( trials - failures )) of $trials trials passed (FAULTS_SEED=$random_seed)"
for kind in "${kinds[@]}"; do
  echo "  $kind: ${ran[$kind]:-0} trials: ${passed[$kind]:-0} faulted and resumed, ${missed_count[$kind]:-0} missed" \
       "(the run had finished), $(( ${ran[$kind]:-0} - ${passed[$kind]:-0} - ${missed_count[$kind]:-0} )) failed"
done
(( failures == 0 )) && [[ -z "${FAULTS_DIR:-}" ]] && rm -rf "$work"
(( failures == 0 ))
