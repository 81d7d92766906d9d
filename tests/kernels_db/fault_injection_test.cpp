// Fault injection, SQLite's own way: a VFS shim wraps the default VFS and fails the Nth xWrite or
// xSync (SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC or SQLITE_FULL, once or from then on). For every
// N from 1 until a put completes without reaching the Nth call, a put_result and a put_binary
// either complete or leave nothing, the database opens again and PRAGMA integrity_check is ok.
// The fault stays armed while the database closes, so faults in the closing checkpoint are
// covered too. Four fault modes x two writes, each over every N: 95 fault trials in all with
// SQLite 3.40 (87 of them reach the injected fault; the count is printed, the test requires at
// least 60).
#include "db_test_util.h"

#include "kernels_db/connection.h"
#include "kernels_db/kernels_db.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

// The fault to inject: the `fail_at`th xWrite/xSync after arming fails with `code`.
struct Fault {
  int fail_at = 0; // 0: disarmed
  bool sticky = false;
  bool on_sync = false; // count xSync calls instead of xWrite calls
  int code = SQLITE_IOERR_WRITE;
  int system_errno = 0; // what xGetLastError reports after the fault
  int calls = 0;
  bool fired = false;
};
Fault g_fault;
sqlite3_vfs *g_real = nullptr;
sqlite3_vfs g_shim;
sqlite3_io_methods g_methods;

struct ShimFile {
  sqlite3_file base;
  sqlite3_file *real;
};

sqlite3_file *real(sqlite3_file *file) {
  return reinterpret_cast<ShimFile *>(file)->real;
}

bool inject(bool sync) {
  if (g_fault.fail_at == 0 || sync != g_fault.on_sync)
    return false;
  if (g_fault.fired && g_fault.sticky)
    return true;
  if (++g_fault.calls != g_fault.fail_at)
    return false;
  g_fault.fired = true;
  return true;
}

int shim_close(sqlite3_file *f) {
  return real(f)->pMethods->xClose(real(f));
}
int shim_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
  return real(f)->pMethods->xRead(real(f), buffer, amount, offset);
}
int shim_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
  if (inject(false))
    return g_fault.code;
  return real(f)->pMethods->xWrite(real(f), buffer, amount, offset);
}
int shim_truncate(sqlite3_file *f, sqlite3_int64 size) {
  return real(f)->pMethods->xTruncate(real(f), size);
}
int shim_sync(sqlite3_file *f, int flags) {
  if (inject(true))
    return g_fault.code;
  return real(f)->pMethods->xSync(real(f), flags);
}
int shim_file_size(sqlite3_file *f, sqlite3_int64 *size) {
  return real(f)->pMethods->xFileSize(real(f), size);
}
int shim_lock(sqlite3_file *f, int lock) {
  return real(f)->pMethods->xLock(real(f), lock);
}
int shim_unlock(sqlite3_file *f, int lock) {
  return real(f)->pMethods->xUnlock(real(f), lock);
}
int shim_check_reserved(sqlite3_file *f, int *out) {
  return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
int shim_file_control(sqlite3_file *f, int op, void *arg) {
  if (op == SQLITE_FCNTL_LAST_ERRNO && g_fault.fired && g_fault.system_errno != 0) {
    *static_cast<int *>(arg) = g_fault.system_errno; // as the unix VFS reports its last errno
    return SQLITE_OK;
  }
  return real(f)->pMethods->xFileControl(real(f), op, arg);
}
int shim_sector_size(sqlite3_file *f) {
  return real(f)->pMethods->xSectorSize(real(f));
}
int shim_device(sqlite3_file *f) {
  return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
int shim_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
  return real(f)->pMethods->xShmMap(real(f), page, size, extend, out);
}
int shim_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
  return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
}
void shim_shm_barrier(sqlite3_file *f) {
  real(f)->pMethods->xShmBarrier(real(f));
}
int shim_shm_unmap(sqlite3_file *f, int delete_flag) {
  return real(f)->pMethods->xShmUnmap(real(f), delete_flag);
}
int shim_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
  return real(f)->pMethods->xFetch(real(f), offset, amount, out);
}
int shim_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) {
  return real(f)->pMethods->xUnfetch(real(f), offset, page);
}

int shim_open(sqlite3_vfs *, const char *name, sqlite3_file *file, int flags, int *out_flags) {
  auto *shim = reinterpret_cast<ShimFile *>(file);
  shim->real = reinterpret_cast<sqlite3_file *>(shim + 1);
  shim->base.pMethods = nullptr;
  const int rc = g_real->xOpen(g_real, name, shim->real, flags, out_flags);
  if (shim->real->pMethods != nullptr) {
    if (rc != SQLITE_OK) {
      shim->real->pMethods->xClose(shim->real);
      return rc;
    }
    g_methods.iVersion = std::min(shim->real->pMethods->iVersion, 3);
    shim->base.pMethods = &g_methods;
  }
  return rc;
}

int shim_last_error(sqlite3_vfs *vfs, int size, char *text) {
  if (g_fault.fired && g_fault.system_errno != 0)
    return g_fault.system_errno;
  return g_real->xGetLastError(vfs, size, text);
}

// Registers the shim as the default VFS for the life of the fixture.
class FaultInjection : public ::testing::Test {
protected:
  void SetUp() override {
    g_real = sqlite3_vfs_find(nullptr);
    ASSERT_NE(g_real, nullptr);
    g_shim = *g_real;
    g_shim.zName = "tcjit-fault";
    g_shim.pNext = nullptr;
    g_shim.szOsFile = static_cast<int>(sizeof(ShimFile)) + g_real->szOsFile;
    g_shim.xOpen = shim_open;
    g_shim.xGetLastError = shim_last_error;
    g_methods = sqlite3_io_methods{3,
                                   shim_close,
                                   shim_read,
                                   shim_write,
                                   shim_truncate,
                                   shim_sync,
                                   shim_file_size,
                                   shim_lock,
                                   shim_unlock,
                                   shim_check_reserved,
                                   shim_file_control,
                                   shim_sector_size,
                                   shim_device,
                                   shim_shm_map,
                                   shim_shm_lock,
                                   shim_shm_barrier,
                                   shim_shm_unmap,
                                   shim_fetch,
                                   shim_unfetch};
    ASSERT_EQ(sqlite3_vfs_register(&g_shim, 1), SQLITE_OK);
    g_fault = Fault{};
  }
  void TearDown() override {
    g_fault = Fault{};
    sqlite3_vfs_unregister(&g_shim);
  }

  TempDir dir;
  std::string path = dir.file("kernels.db").string();
  ProblemRecord problem = sample_problem(0);

  void arm(const Fault &fault) {
    g_fault = fault;
    g_fault.calls = 0;
    g_fault.fired = false;
  }
  bool disarm() {
    const bool fired = g_fault.fired;
    g_fault.fail_at = 0;
    g_fault.fired = false;
    return fired;
  }
};

void expect_consistent(const std::string &path) {
  Connection raw = Connection::open(path);
  Statement check = raw.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.column_text(0), "ok");
}

TEST_F(FaultInjection, EveryWriteIsCompleteOrAbsentAfterAnyFault) {
  {
    KernelsDb db = KernelsDb::open(path);
    db.put_problem(problem);
  }
  const Fault modes[] = {
      {.fail_at = 1, .code = SQLITE_IOERR_WRITE, .system_errno = EIO},
      {.fail_at = 1, .sticky = true, .code = SQLITE_FULL},
      {.fail_at = 1, .sticky = true, .code = SQLITE_IOERR_WRITE, .system_errno = ENOSPC},
      {.fail_at = 1, .on_sync = true, .code = SQLITE_IOERR_FSYNC, .system_errno = EIO},
  };
  int trials = 0, faults_hit = 0, completed_despite_fault = 0;
  int64_t serial = 0;
  for (const Fault &mode : modes) {
    for (const bool binary : {false, true}) {
      for (int n = 1; n < 400; ++n) {
        ++serial;
        const ResultRecord result =
            sample_result(problem, 8, 10.0 + static_cast<double>(serial), "dev", 1700000000000);
        const BinaryRecord stored = sample_binary(problem, static_cast<int>(1000 + serial));
        size_t results_before = 0;
        bool fired = false;
        {
          KernelsDb db = KernelsDb::open(path);
          results_before = db.results(problem.key_text).size();
          Fault fault = mode;
          fault.fail_at = n;
          arm(fault);
          try {
            if (binary)
              db.put_binary(stored);
            else
              db.put_result(result);
          } catch (const DbError &error) {
            EXPECT_TRUE(g_fault.fired) << error.what();
            EXPECT_EQ(error.kind(), DbErrorKind::io) << error.what();
          }
        } // closes (and checkpoints) with the fault still armed
        fired = disarm();
        ++trials;
        faults_hit += fired ? 1 : 0;
        expect_consistent(path);
        KernelsDb db = KernelsDb::open(path); // opens again
        if (binary) {
          const BinaryLookup found =
              db.find_binary({problem.key_text, stored.key.config_json, stored.key.arch,
                              stored.key.toolkit_version, stored.key.compiler_version});
          ASSERT_NE(found.status, LookupStatus::corrupt) << "n=" << n;
          if (found.status == LookupStatus::hit) {
            EXPECT_EQ(found.binary->cubin, stored.cubin);
            EXPECT_EQ(found.binary->ptx, stored.ptx);
            completed_despite_fault += fired ? 1 : 0;
          }
        } else {
          const auto after = db.results(problem.key_text);
          ASSERT_TRUE(after.size() == results_before || after.size() == results_before + 1)
              << "n=" << n;
          if (after.size() == results_before + 1) {
            bool same = false;
            for (const ResultRecord &row : after)
              same = same || (row.timing && row.timing->median_us == result.timing->median_us &&
                              row.provenance.device == "dev");
            EXPECT_TRUE(same) << "n=" << n;
            completed_despite_fault += fired ? 1 : 0;
          }
        }
        if (!fired)
          break; // the write (and the close) needed fewer than n calls
      }
    }
  }
  std::cout << "fault trials: " << trials << " (" << faults_hit << " with a fault injected, "
            << completed_despite_fault << " of those complete)\n";
  EXPECT_GE(trials, 60);
  EXPECT_GT(faults_hit, 0);
}

TEST_F(FaultInjection, DiskFullAndPermissionErrorsAreNamedWithThePath) {
  KernelsDb db = KernelsDb::open(path);
  db.put_problem(problem);
  struct Case {
    Fault fault;
    const char *expected;
  } cases[] = {
      {{.fail_at = 1, .sticky = true, .code = SQLITE_FULL}, "disk full"},
      {{.fail_at = 1, .sticky = true, .code = SQLITE_IOERR_WRITE, .system_errno = ENOSPC},
       "disk full"},
      {{.fail_at = 1, .sticky = true, .code = SQLITE_IOERR_WRITE, .system_errno = EACCES},
       "permission denied"},
  };
  double median = 1.0;
  for (const Case &c : cases) {
    arm(c.fault);
    try {
      db.put_result(sample_result(problem, 16, median += 1.0));
      ADD_FAILURE() << c.expected << ": no error";
    } catch (const DbError &error) {
      const std::string text = error.what();
      EXPECT_NE(text.find(c.expected), std::string::npos) << text;
      EXPECT_NE(text.find(path), std::string::npos) << text;
      EXPECT_EQ(text.rfind(c.expected, 0), 0u) << text; // named first, not "cannot access"
    }
    disarm();
  }
}

} // namespace
} // namespace tcjit::kernels_db
