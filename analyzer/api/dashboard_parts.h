// The pieces of the on-call page (dashboard.h), one file each so none grows
// too long: the page's script core (polling, cards, tables) and its pictures
// (the fabric as rails by spines, the incident timeline).
#pragma once

#include <string_view>

namespace hostmesh::analyzer::api {

std::string_view DashboardStyle();         // the analyzer's pages' CSS
std::string_view DashboardHelperScript();  // elements, formats, tables, getJson
std::string_view DashboardCoreScript();
std::string_view DashboardPictureScript();

}  // namespace hostmesh::analyzer::api
