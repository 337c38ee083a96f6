// The translation unit that builds the test binaries' shared precompiled
// header (hostmesh_test_pch in HostmeshTargets.cmake); it has no code of its own.
