#include "support/run_process.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace tcjit::support {

namespace {

// Closes the descriptors it holds when it goes out of scope.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0)
        ::close(f);
  }
  void close_end(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
};

} // namespace

ProcessResult run_process(const std::vector<std::string> &argv) {
  ProcessResult r;
  if (argv.empty() || argv[0].empty()) {
    r.problem = "no program to run";
    return r;
  }
  Pipe out;
  if (::pipe2(out.fd, O_CLOEXEC) != 0) {
    r.problem = std::string("cannot make a pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 2);
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  out.close_end(1);
  if (spawned != 0) {
    r.problem = "cannot execute '" + argv[0] + "': " + std::strerror(spawned);
    return r;
  }
  r.started = true;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(out.fd[0], buf, sizeof buf);
    if (n > 0)
      r.output.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      r.problem = std::string("cannot wait for '") + argv[0] + "': " + std::strerror(errno);
      return r;
    }
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.signal = WTERMSIG(status);
  return r;
}

} // namespace tcjit::support
