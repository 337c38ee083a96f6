#include "common/config/yaml_loader.h"

#include <yaml-cpp/exceptions.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

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

void ReadYamlFile(const std::filesystem::path& path, const MapReader::ReadFn& read) {
  std::string problem;
  std::error_code ec;
  std::string contents;
  if (std::filesystem::is_directory(path, ec)) {
    problem = "is a directory";
  } else if (std::ifstream file{path, std::ios::binary}; !file.is_open()) {
    // errno from the failed open is what the operator needs (ENOENT, EACCES).
    problem = std::strerror(errno);
  } else {
    contents.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    if (file.bad()) problem = std::strerror(errno);
  }
  if (!problem.empty()) {
    IssueSink sink{path.string()};
    sink.Add(0, 0, "", "cannot read the file: " + problem);
    sink.ThrowIfAny();
  }
  ReadYaml(contents, path.string(), read);
}

}  // namespace hostmesh::config
