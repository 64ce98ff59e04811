#!/usr/bin/env bash
# ThreadSanitizer over seed's threaded code (docs/reliability.md,
# "ThreadSanitizer"): builds into build-thread with -fsanitize=thread and
# runs the ctest tests that exercise threads and ranks:
#   - spec_test's engine and lesson tests: the SEED engine and seed-batch
#     (scheduled_engine, drafter_pool, verify_queue, lesson); the lookahead
#     tests (the asynchronous engine's draft thread);
#   - parallel_distributed_test / parallel_distributed_tp_test under mpirun
#     (mpi_event_loop, draft_worker, target_worker, idle_backoff, the
#     draft-rank kill test);
#   - run_cli_test and target_rank_fault_test: `seed run` with the seed
#     engine in one process and under mpirun.
# Uninstrumented libraries (libgomp, libtorch, Open MPI) are covered by
# scripts/sanitizers/tsan.supp; OMP_NUM_THREADS=1 keeps OpenMP's own
# threads, whose barriers TSan cannot see, out of the runs.
# Usage: scripts/sanitizers/thread.sh [-j JOBS]
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs="$(nproc)"
[ "${1:-}" = -j ] && jobs="$2"

targets=(spec_test parallel_distributed_test parallel_distributed_tp_test seed run_cli_test target_rank_fault_test)
tests='^(EngineTest\.|LessonTest\.|LookaheadEngine\.|EngineTextTest\.Asynchronous|parallel_distributed_|RunCliTest\.|TargetRankFaultTest\.)'

flags="-fsanitize=thread -g1 -O1"
cmake -S . -B build-thread -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread -DCMAKE_MODULE_LINKER_FLAGS=-fsanitize=thread
cmake --build build-thread -j "$jobs" --target "${targets[@]}"

# halt_on_error: a report fails the test that printed it (non-zero exit).
export TSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/tsan.supp halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
export OMP_NUM_THREADS=1
ctest --test-dir build-thread --output-on-failure -j "$jobs" --timeout 1800 -R "$tests"
