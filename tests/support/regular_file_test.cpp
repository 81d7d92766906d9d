#include "support/regular_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace tcjit::support {
namespace {

namespace fs = std::filesystem;

class RegularFile : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tcjit_regular_file_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RegularFile, ReadsARegularFileWhole) {
  const fs::path path = dir_ / "k.ptx";
  std::ofstream(path, std::ios::binary) << std::string("a\0b", 3);
  const FileRead r = read_regular_file(path.string(), 100);
  ASSERT_EQ(r.status, FileReadStatus::ok) << r.problem;
  EXPECT_EQ(r.text, std::string("a\0b", 3));
  EXPECT_EQ(r.size, 3u);
}

TEST_F(RegularFile, FifoDeviceSocketAndDirectoryAreRefusedWithoutBlocking) {
  const fs::path fifo = dir_ / "fifo.ptx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  FileRead r = read_regular_file(fifo.string(), 100); // would block in open() if opened
  EXPECT_EQ(r.status, FileReadStatus::not_regular);
  EXPECT_NE(r.problem.find("'" + fifo.string() + "' is not a regular file (it is a FIFO)"),
            std::string::npos)
      << r.problem;
  r = read_regular_file("/dev/zero", 100); // would never end if read
  EXPECT_EQ(r.status, FileReadStatus::not_regular);
  EXPECT_NE(r.problem.find("'/dev/zero' is not a regular file (it is a character device)"),
            std::string::npos)
      << r.problem;
  r = read_regular_file(dir_.string(), 100);
  EXPECT_EQ(r.status, FileReadStatus::not_regular);
  EXPECT_NE(r.problem.find("(it is a directory)"), std::string::npos) << r.problem;
  const fs::path sock = dir_ / "s";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
  r = read_regular_file(sock.string(), 100);
  ::close(fd);
  EXPECT_EQ(r.status, FileReadStatus::not_regular);
  EXPECT_NE(r.problem.find("(it is a socket)"), std::string::npos) << r.problem;
  // a symbolic link to a device is the device
  fs::create_symlink("/dev/zero", dir_ / "zero.ptx");
  EXPECT_EQ(read_regular_file((dir_ / "zero.ptx").string(), 100).status,
            FileReadStatus::not_regular);
  // the check alone (for files another reader opens)
  EXPECT_NE(not_regular_file_problem(fifo.string()).find("is not a regular file (it is a FIFO)"),
            std::string::npos);
  EXPECT_EQ(not_regular_file_problem((dir_ / "none").string()), "");
}

TEST_F(RegularFile, OverTheLimitIsRefusedBeforeReading) {
  const fs::path path = dir_ / "big.ptx";
  { std::ofstream(path) << ""; }
  fs::resize_file(path, 3u << 20); // sparse: nothing is written
  const FileRead r = read_regular_file(path.string(), 1u << 20);
  EXPECT_EQ(r.status, FileReadStatus::too_large);
  EXPECT_EQ(r.size, 3u << 20);
  EXPECT_TRUE(r.text.empty());
  EXPECT_NE(r.problem.find("is 3145728 bytes, over the limit of 1048576 bytes (1 MiB)"),
            std::string::npos)
      << r.problem;
}

TEST_F(RegularFile, MissingFileIsNamed) {
  const FileRead r = read_regular_file((dir_ / "none.ptx").string(), 100);
  EXPECT_EQ(r.status, FileReadStatus::missing);
  EXPECT_NE(r.problem.find("none.ptx' (No such file or directory)"), std::string::npos)
      << r.problem;
}

} // namespace
} // namespace tcjit::support
