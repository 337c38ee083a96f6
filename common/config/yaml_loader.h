#pragma once

#include <filesystem>
#include <memory>
#include <string_view>

#include "common/config/map_reader.h"

namespace hostmesh::config {

// Parses `text` (yaml-cpp's parser, yaml_document.h) as one YAML document whose
// top level is a map and hands that map to `read`. Throws ConfigError with every issue found: YAML
// syntax (with its line), and whatever `read` reported through the reader. `source_name` names the
// text in messages ("agent.yaml").
// When `parsed` is given it receives the document, for positions that checks
// after the read need (the inventory's cross-references).
void ReadYaml(std::string_view text, std::string_view source_name, const MapReader::ReadFn& read,
              std::shared_ptr<const YamlDocument>* parsed = nullptr);

// ReadYaml over a file's contents; a file that cannot be read is a ConfigError too.
void ReadYamlFile(const std::filesystem::path& path, const MapReader::ReadFn& read);

}  // namespace hostmesh::config
