#include "ctl/tar_gz.h"

#include <archive.h>
#include <archive_entry.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace hostmesh::ctl {

bool WriteTarGz(const std::string& path, const std::string& folder,
                const std::vector<BundleFile>& files, std::int64_t mtime_s, std::string* error) {
  const std::string temp = path + ".partial";
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(),
                                                            &archive_write_free);
  const auto failed = [&](const std::string& what) {
    *error = what + ": " + (archive_error_string(a.get()) ? archive_error_string(a.get()) : "?");
    a.reset();
    std::remove(temp.c_str());
    return false;
  };
  if (archive_write_add_filter_gzip(a.get()) != ARCHIVE_OK ||
      archive_write_set_format_pax_restricted(a.get()) != ARCHIVE_OK) {
    return failed("cannot set up the archive");
  }
  if (archive_write_open_filename(a.get(), temp.c_str()) != ARCHIVE_OK) {
    return failed("cannot write " + temp);
  }
  for (const BundleFile& f : files) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(),
                                                                        &archive_entry_free);
    archive_entry_set_pathname(entry.get(), (folder + "/" + f.name).c_str());
    archive_entry_set_size(entry.get(), static_cast<la_int64_t>(f.contents.size()));
    archive_entry_set_filetype(entry.get(), AE_IFREG);
    archive_entry_set_perm(entry.get(), 0644);
    archive_entry_set_mtime(entry.get(), mtime_s, 0);
    if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) {
      return failed("cannot add " + f.name);
    }
    if (archive_write_data(a.get(), f.contents.data(), f.contents.size()) !=
        static_cast<la_ssize_t>(f.contents.size())) {
      return failed("cannot write " + f.name);
    }
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) return failed("cannot finish " + temp);
  a.reset();
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    *error = "cannot rename " + temp + " to " + path + ": " + ec.message();
    return false;
  }
  return true;
}

}  // namespace hostmesh::ctl
