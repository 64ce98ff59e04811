// The default AddressSanitizer options of programs that may run as MPI
// ranks (the seed binary, the MPI test programs), compiled into them in
// ASan builds only (seed_asan_options in CMakeLists.txt); ASAN_OPTIONS
// still overrides them.
//
// A rank started by mpirun unwinds each allocation's stack the slow way.
// Open MPI 4.1 keeps what MPI_Init allocates past MPI_Finalize, and unloads
// the components that allocated it; the fast unwinder stops at the first
// frame in those libraries (built without frame pointers), so only a full
// unwind reaches the Open MPI libraries that lsan.supp names. Everywhere
// else the fast unwinder stays: the slow one costs five times the CPU.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

// Runs while the runtime starts: uninstrumented, as there is no shadow
// memory yet.
#define SEED_BEFORE_SANITIZERS __attribute__((no_sanitize("address", "undefined")))

namespace {

// The runtime asks for its options before libc has set up `environ`: the
// environment is read from /proc, by system calls.
SEED_BEFORE_SANITIZERS bool started_by_mpirun() {
  static char environment[1 << 16];
  const long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  long size = 0;
  for (long n = 1; n > 0 && size < long(sizeof(environment)) - 1; size += n) {
    n = syscall(SYS_read, fd, environment + size, sizeof(environment) - 1 - size);
    if (n < 0) n = 0;
  }
  syscall(SYS_close, fd);
  constexpr char kName[] = "OMPI_COMM_WORLD_SIZE=";
  for (long start = 0; start < size;) {
    long k = 0;
    while (kName[k] != '\0' && start + k < size && environment[start + k] == kName[k]) ++k;
    if (kName[k] == '\0') return true;
    while (start < size && environment[start] != '\0') ++start;
    ++start;
  }
  return false;
}

}  // namespace

extern "C" __attribute__((visibility("default"), used)) SEED_BEFORE_SANITIZERS const char* __asan_default_options() {
  return started_by_mpirun() ? "fast_unwind_on_malloc=0" : "";
}
