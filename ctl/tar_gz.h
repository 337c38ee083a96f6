// Writes files into a gzip-compressed tar archive (POSIX ustar/pax, through
// libarchive), all under one folder, atomically: a temp file renamed into
// place, so a failed write never leaves half a bundle under the name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ctl/bundle_files.h"

namespace hostmesh::ctl {

// False with *error naming what failed.
bool WriteTarGz(const std::string& path, const std::string& folder,
                const std::vector<BundleFile>& files, std::int64_t mtime_s, std::string* error);

}  // namespace hostmesh::ctl
