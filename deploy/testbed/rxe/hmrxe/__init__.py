"""Soft-RoCE hosts for the emulated fabric: Debian's kernel under QEMU (TCG)
with rdma_rxe, attached by tap devices to the fabric's rail switches."""
