#include "common/config/yaml_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/exceptions.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/config/value_parsers.h"

namespace hostmesh::config {

void ReadYaml(std::string_view text, std::string_view source_name, const MapReader::ReadFn& read,
              std::shared_ptr<const YamlDocument>* parsed) {
  IssueSink sink{std::string(source_name)};
  std::vector<std::shared_ptr<const YamlDocument>> documents;
  try {
    documents = YamlDocument::ParseAll(text);
  } catch (const YAML::Exception& e) {
    const bool known = e.mark.line >= 0;
    sink.Add(known ? e.mark.line + 1 : 0, known ? e.mark.column + 1 : 0, "",
             "invalid YAML: " + e.msg);
    sink.ThrowIfAny();
  }
  if (documents.size() > 1) {
    // A second document would be silently ignored; say so instead.
    const YAML::Mark mark = documents[1]->root().Mark();
    sink.Add(mark.line + 1, mark.column + 1, "", "only one YAML document is allowed");
  }
  // An empty file is an empty map: the reader then names each missing required key.
  const YamlNode root = documents.empty() ? YamlDocument::EmptyMap() : documents[0]->root();
  if (!root.IsMap() && !root.IsNull()) {
    const YAML::Mark mark = root.Mark();
    sink.Add(mark.line + 1, mark.column + 1, "", "the top level must be a map of keys");
    sink.ThrowIfAny();
  }
  MapReader reader(root, "", root.Mark(), &sink);
  read(reader);
  reader.Finish();
  sink.ThrowIfAny();
  if (parsed != nullptr && !documents.empty()) *parsed = documents[0];
}

namespace {

[[noreturn]] void FileIssue(const std::filesystem::path& path, std::string message) {
  IssueSink sink{path.string()};
  sink.Add(0, 0, "", std::move(message));
  sink.ThrowIfAny();
  throw std::logic_error("unreachable");
}

std::string TooLarge(std::string size, ByteSize cap) {
  return "the file is " + std::move(size) + ", over the cap of " + FormatByteSize(cap) + " (" +
         std::to_string(cap.bytes) + " bytes); refused before parsing";
}

}  // namespace

std::string ReadConfigFile(const std::filesystem::path& path, ByteSize max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  // errno from the failed open is what the operator needs (ENOENT, EACCES).
  if (fd < 0) FileIssue(path, std::string("cannot read the file: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    FileIssue(path, std::string("cannot read the file: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) FileIssue(path, "cannot read the file: is a directory");
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes.bytes) {
    FileIssue(path, TooLarge(std::to_string(st.st_size) + " bytes", max_bytes));
  }
  // Read straight into the result, no buffer on the stack: a daemon's main
  // thread keeps every stack page it ever touched (a 64 KiB buffer here was
  // a quarter of the agent's stack and heap growth budget).
  std::string contents;
  // A regular file in one read (and one to see its end); a pipe, or a file
  // whose size says 0 (procfs), a page at a time.
  const std::size_t step = std::max<std::size_t>(
      S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) + 1 : 0, 4096);
  contents.reserve(step);
  for (;;) {
    const std::size_t used = contents.size();
    contents.resize(used + step);
    const ssize_t n = ::read(fd, contents.data() + used, step);
    contents.resize(used + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) FileIssue(path, std::string("cannot read the file: ") + std::strerror(errno));
    if (n == 0) break;
    // A pipe, or a file that grew after fstat: stop at the cap, not at the end.
    if (contents.size() > max_bytes.bytes) {
      FileIssue(path,
                TooLarge("more than " + std::to_string(max_bytes.bytes) + " bytes", max_bytes));
    }
  }
  return contents;
}

void ReadYamlFile(const std::filesystem::path& path, const MapReader::ReadFn& read,
                  ByteSize max_bytes) {
  const std::string contents = ReadConfigFile(path, max_bytes);
  ReadYaml(contents, path.string(), read);
}

}  // namespace hostmesh::config
