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
#include <cstdlib>

extern "C" __attribute__((visibility("default"), used, no_sanitize("address", "undefined")))
const char* __asan_default_options() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ? "fast_unwind_on_malloc=0" : "";
}
