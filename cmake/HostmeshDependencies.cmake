# Every third-party dependency, as Debian 12 packages it (scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(IBVERBS REQUIRED IMPORTED_TARGET libibverbs)
pkg_check_modules(NETFILTER_QUEUE REQUIRED IMPORTED_TARGET libnetfilter_queue)
# prometheus-cpp's core only (registry, metric types, text serializer), found
# through pkg-config: its CMake config also looks for civetweb, CURL and ZLIB
# for the pull and push parts we do not link.
pkg_check_modules(PROMETHEUS_CPP_CORE REQUIRED IMPORTED_TARGET prometheus-cpp-core)
# jemalloc, the allocator of the long-lived, allocation-heavy processes (the
# analyzer and the simulator): glibc's malloc fragments under their churn of
# per-window and per-path objects (hostmesh-sim bench, sim/README.md).
pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
# hostmeshctl bundle writes .tar.gz support bundles.
pkg_check_modules(LIBARCHIVE REQUIRED IMPORTED_TARGET libarchive)
# The HTTP server (common/http): libmicrohttpd's epoll workers, and GnuTLS,
# its TLS library, called directly for certificate rotation, client
# certificate checks and the token digest.
pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd>=0.9.75)
pkg_check_modules(GNUTLS REQUIRED IMPORTED_TARGET gnutls>=3.7)

find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
include(HostmeshStaticGrpc)
# What the libraries link for gRPC, protobuf and Abseil: shared, static in the agent.
hostmesh_grpc_dependency(hm_grpcpp gRPC::grpc++)
hostmesh_grpc_dependency(hm_protobuf protobuf::libprotobuf)
hostmesh_grpc_dependency(hm_absl_synchronization absl::synchronization)
find_package(RocksDB CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS graph)
find_package(spdlog CONFIG REQUIRED)
find_package(yaml-cpp CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3 CONFIG REQUIRED)
find_package(CURL REQUIRED)
find_package(GTest CONFIG REQUIRED)
find_package(benchmark CONFIG REQUIRED)

find_program(HOSTMESH_PROTOC protoc REQUIRED)
find_program(HOSTMESH_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
find_program(HOSTMESH_PROMTOOL promtool)
# Debian's python3 first: the testbed scripts use only its standard library.
find_program(HOSTMESH_PYTHON3 python3 HINTS /usr/bin REQUIRED)
