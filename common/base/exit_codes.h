#pragma once

// Exit codes of hostmesh-agent and hostmesh-analyzer, a contract with systemd
// (RestartPreventExitStatus=2 in systemd/*.service) and with scripts; the
// docs/operating.md ("Exit codes") lists them.

namespace hostmesh {

// Ran and stopped on request, or --check-config found nothing wrong.
inline constexpr int kExitOk = 0;
// Could not start or went on failing, for a reason a retry may clear: a port
// in use, the store locked or unreadable, no NIC could be opened. systemd
// restarts the unit. (--audit-store: something is stored twice.)
inline constexpr int kExitFailure = 1;
// A usage, config or inventory error (a missing or unreadable file, one too
// large, a bad key or value, an inconsistent inventory): a retry cannot fix
// it, so systemd does not restart the unit.
inline constexpr int kExitConfig = 2;

}  // namespace hostmesh
