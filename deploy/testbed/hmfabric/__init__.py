"""The hostmesh emulated rail-fabric testbed (see deploy/testbed/README.md)."""
