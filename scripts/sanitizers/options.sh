# Sourced by scripts/test.sh and scripts/fuzz.sh: sanitizer runtime options
# for seed's instrumented builds. Findings abort (non-zero exit, so ctest and
# libFuzzer count them); the suppression files list what uninstrumented
# libraries (libtorch, OpenBLAS, Open MPI) trip, each entry with its reason.
sanitizers=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$sanitizers/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$sanitizers/ubsan.supp}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
