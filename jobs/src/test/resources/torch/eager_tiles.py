"""Eager torch reference and kernel-like tile views of the same computation, for TorchReferenceTest.

usage: python3 eager_tiles.py OUT_DIR

Computes mm = a @ b and p = softmax(mm, dim=-1) eagerly with torch (float32) and writes:
  OUT_DIR/reference.safetensors  a, b, mm, softmax, written by hand in the safetensors format
                                 (u64 LE header length, JSON header, raw little-endian bytes; torch 1.13
                                 has no safetensors writer, and no pickle is involved)
  OUT_DIR/names.json             the import-reference names map (tensor_name, stage, phase, parameter_position)
  OUT_DIR/views.json             tile views as a fused kernel would dump them, one entry per view, bytes in
                                 OUT_DIR/view-<n>.bin; the matmul task of row tile t recomputes its tile as
                                 a[t] @ b, the softmax task as softmax(that tile); every matmul task reads all
                                 of b (overlapping views of one parameter); one softmax tile is perturbed
  OUT_DIR/perturbed.json         which element of which tensor, in which task's view
"""
import json
import os
import struct
import sys

import torch

ROWS, INNER, COLS, TILE = 64, 32, 48, 16


def le_bytes(t):
    return t.contiguous().numpy().astype("<f4").tobytes()


def write_safetensors(path, tensors):
    header, blobs, offset = {"__metadata__": {"writer": "eager_tiles.py", "torch": torch.__version__}}, [], 0
    for name, t in tensors.items():
        data = le_bytes(t)
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode("utf-8"))
        for b in blobs:
            f.write(b)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(17)
    a = torch.randn(ROWS, INNER, dtype=torch.float32)
    b = torch.randn(INNER, COLS, dtype=torch.float32)
    mm = a @ b
    p = torch.softmax(mm, dim=-1)
    write_safetensors(os.path.join(out, "reference.safetensors"), {"a": a, "b": b, "mm": mm, "softmax": p})
    names = {
        "a": {"tensor_name": "a", "stage": "matmul", "phase": "before", "parameter_position": 0},
        "b": {"tensor_name": "b", "stage": "matmul", "phase": "before", "parameter_position": 1},
        "mm": {"tensor_name": "mm", "stage": "matmul", "phase": "after", "parameter_position": 2},
        "softmax": {"tensor_name": "p", "stage": "softmax", "phase": "after", "parameter_position": 3},
    }
    with open(os.path.join(out, "names.json"), "w") as f:
        json.dump(names, f)

    views = []
    bad_tile, bad_row, bad_col = 2, 5, 7

    def view(task, index, stage, io, pp, name, offset, t):
        n = len(views)
        with open(os.path.join(out, "view-%d.bin" % n), "wb") as f:
            f.write(le_bytes(t))
        views.append({"task_id": task, "task_index": index, "stage": stage, "io": io, "parameter_position": pp,
                      "tensor_name": name, "source_offset_bytes": offset, "shape": list(t.shape),
                      "file": "view-%d.bin" % n})

    row_bytes = {"a": INNER * 4, "mm": COLS * 4}
    for t in range(ROWS // TILE):
        rows = slice(t * TILE, (t + 1) * TILE)
        tile = a[rows] @ b  # the kernel's own tile computation
        view(100 + t, t, "matmul", "input", 0, "a", t * TILE * row_bytes["a"], a[rows])
        view(100 + t, t, "matmul", "input", 1, "b", 0, b)
        view(100 + t, t, "matmul", "output", 2, "mm", t * TILE * row_bytes["mm"], tile)
        sm = torch.softmax(tile, dim=-1)
        if t == bad_tile:
            sm = sm.clone()
            sm[bad_row, bad_col] = sm[bad_row, bad_col] * 1.5 + 0.01
        view(200 + t, t, "softmax", "output", 3, "p", t * TILE * row_bytes["mm"], sm)
    with open(os.path.join(out, "views.json"), "w") as f:
        json.dump(views, f, indent=1)
    flat = (bad_tile * TILE + bad_row) * COLS + bad_col
    with open(os.path.join(out, "perturbed.json"), "w") as f:
        json.dump({"tensor": "softmax", "tensor_name": "p", "flat_index": flat, "task_id": 200 + bad_tile,
                   "task_index": bad_tile, "mm_tiles_bitwise_equal": all(
                       torch.equal(a[t * TILE:(t + 1) * TILE] @ b, mm[t * TILE:(t + 1) * TILE]) for t in range(ROWS // TILE))}, f)
    print("eager_tiles: torch %s, %d views in %s" % (torch.__version__, len(views), out))


if __name__ == "__main__":
    main(sys.argv[1])
