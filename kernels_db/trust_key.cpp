#include "kernels_db/trust_key.h"

#include "kernels_db/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tcjit::kernels_db {
namespace {

const char *non_empty_env(const char *name) {
  const char *value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

// Reads the key from an open descriptor, refusing what a private key file cannot be.
TrustKey read_key(int fd, const std::string &name) {
  TrustKey key;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    key.warning = "cannot read the cache key '" + name + "': " + errno_text(errno);
    return key;
  }
  const std::string fix = "; remove it and tcjit creates a new one (stored kernels are then "
                          "rebuilt once)";
  if (!S_ISREG(st.st_mode)) {
    key.warning = "the cache key '" + name + "' is not a regular file" + fix;
  } else if (st.st_uid != ::geteuid()) {
    key.warning = "the cache key '" + name + "' is owned by another user" + fix;
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    key.warning = "the cache key '" + name + "' is accessible to group or others (mode " + mode +
                  "); `chmod 600` it, or remove it and tcjit creates a new one (stored kernels "
                  "are then rebuilt once)";
  } else if (st.st_size != static_cast<off_t>(kTrustKeyBytes)) {
    key.warning = "the cache key '" + name + "' has " + std::to_string(st.st_size) +
                  " bytes, not " + std::to_string(kTrustKeyBytes) + fix;
  }
  if (!key.warning.empty())
    return key;
  std::string bytes(kTrustKeyBytes, '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      key.warning = "cannot read the cache key '" + name + "'" +
                    (n < 0 ? ": " + errno_text(errno) : std::string(": short file")) + fix;
      return key;
    }
    done += static_cast<size_t>(n);
  }
  key.bytes = std::move(bytes);
  return key;
}

TrustKey open_key(const std::filesystem::path &path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    TrustKey key;
    if (errno == ELOOP)
      key.warning = "the cache key '" + path.string() +
                    "' is a symbolic link; remove it and "
                    "tcjit creates a new one";
    else if (errno != ENOENT)
      key.warning = "cannot open the cache key '" + path.string() + "': " + errno_text(errno);
    return key;
  }
  TrustKey key = read_key(fd, path.string());
  ::close(fd);
  return key;
}

bool write_all(int fd, const unsigned char *data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Creates the key file; false (and nothing left behind) when it cannot be written. Another process
// creating it at the same time is fine: the first link wins and both read that one.
bool create_key(const std::filesystem::path &path) {
  std::error_code ec;
  if (path.has_parent_path() && !std::filesystem::exists(path.parent_path(), ec)) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
      return false;
    ::chmod(path.parent_path().c_str(), 0700);
  }
  unsigned char bytes[kTrustKeyBytes];
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    return false;
  const std::string temp = path.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  const bool written = write_all(fd, bytes, sizeof bytes) && ::fsync(fd) == 0;
  ::close(fd);
  OPENSSL_cleanse(bytes, sizeof bytes);
  bool placed = false;
  if (written) {
    if (::link(temp.c_str(), path.c_str()) == 0 || errno == EEXIST)
      placed = true;
    else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP)
      placed = ::rename(temp.c_str(), path.c_str()) == 0; // a file system without hard links
  }
  ::unlink(temp.c_str());
  return placed;
}

void append_field(std::string &message, std::string_view bytes) {
  uint64_t size = bytes.size();
  for (int i = 0; i < 8; ++i)
    message += static_cast<char>((size >> (8 * i)) & 0xff);
  message.append(bytes);
}

} // namespace

std::optional<std::filesystem::path> trust_key_path() {
  if (const char *file = non_empty_env("TCJIT_KEY_FILE"))
    return std::filesystem::path(file);
  if (const char *config = non_empty_env("XDG_CONFIG_HOME"))
    return std::filesystem::path(config) / "tcjit" / "cache.key";
  if (const char *home = non_empty_env("HOME"))
    return std::filesystem::path(home) / ".config" / "tcjit" / "cache.key";
  return std::nullopt;
}

TrustKey load_or_create_trust_key(const std::filesystem::path &path) {
  TrustKey key = open_key(path);
  if (!key.bytes.empty() || !key.warning.empty())
    return key;
  if (!create_key(path))
    return key; // no key (e.g. $HOME not writable): every stored binary is rebuilt, silently
  return open_key(path);
}

TrustKey load_or_create_trust_key() {
  const auto path = trust_key_path();
  return path ? load_or_create_trust_key(*path) : TrustKey{};
}

std::string binary_mac(const std::string &key, const BinaryRecord &binary) {
  std::string message;
  message.reserve(binary.ptx.size() + binary.cubin.size() + 1024);
  // Schema 5: a binary is shared by the problems of its kernel identity, which the MAC covers in
  // place of schema 4's problem key and config (a MAC of schema 4 never verifies).
  append_field(message, "tcjit binary 5");
  append_field(message, binary.kernel_identity);
  append_field(message, binary.key.arch);
  append_field(message, binary.key.toolkit_version);
  append_field(message, binary.key.compiler_version);
  append_field(message, binary.ptx);
  append_field(message, std::string_view(reinterpret_cast<const char *>(binary.cubin.data()),
                                         binary.cubin.size()));
  append_field(message, binary.resources_json);
  append_field(message, binary.compile_options);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char *>(message.data()), message.size(), digest,
           &size) == nullptr)
    return ""; // no MAC: the binary counts as foreign
  return digest_hex(digest, size);
}

bool same_mac(const std::string &a, const std::string &b) {
  return !a.empty() && a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

} // namespace tcjit::kernels_db
