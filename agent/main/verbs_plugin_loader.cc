// LoadVerbsPlugin (verbs_plugin.h): dlopen of the module beside or below the
// executable.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <system_error>

#include "agent/main/verbs_plugin.h"

namespace hostmesh::agent::app {
namespace {

const VerbsPlugin* Load(std::string* error) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    *error = "cannot find the agent's executable (/proc/self/exe): " + ec.message();
    return nullptr;
  }
  std::string tried;
  for (const std::filesystem::path& candidate :
       {exe.parent_path() / kVerbsPluginFile,
        exe.parent_path() / ".." / "lib" / "hostmesh" / kVerbsPluginFile}) {
    std::string why;
    if (const VerbsPlugin* plugin = LoadVerbsPluginFrom(candidate, &why)) return plugin;
    tried += (tried.empty() ? "" : "; ") + why;
  }
  *error = "verbs transport module not loadable (" + tried + ")";
  return nullptr;
}

}  // namespace

const VerbsPlugin* LoadVerbsPluginFrom(const std::filesystem::path& file, std::string* error) {
  void* handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    *error = why != nullptr ? why : file.string() + ": cannot load";
    return nullptr;
  }
  using Entry = const VerbsPlugin* (*)();
  const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "hostmesh_agent_verbs_plugin"));
  const VerbsPlugin* plugin = entry != nullptr ? entry() : nullptr;
  if (plugin == nullptr || plugin->version != kVerbsPluginVersion) {
    *error = file.string() + ": not this build's verbs module";
    ::dlclose(handle);
    return nullptr;
  }
  return plugin;  // stays loaded for the life of the process
}

const VerbsPlugin* LoadVerbsPlugin(std::string* error) {
  static std::once_flag once;
  static const VerbsPlugin* plugin = nullptr;
  static std::string load_error;
  std::call_once(once, [] { plugin = Load(&load_error); });
  if (plugin == nullptr && error != nullptr) *error = load_error;
  return plugin;
}

}  // namespace hostmesh::agent::app
