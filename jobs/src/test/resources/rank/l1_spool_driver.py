"""Test driver: replays a vector through deploy/rank/l1_spool.py the way a training script would.

usage: l1_spool_driver.py L1_SPOOL_PY VECTOR.manifest.json VECTOR.bin SPOOL_DIR [--chunk-bytes N] [--no-optionals]

Even records go in as dicts, odd ones as objects shaped like the seed's _L1RecordPlan dataclass
with a torch-like dtype object (str() gives "torch.<name>"); the buffer goes in as a memoryview.
"""
import dataclasses
import importlib.util
import json
import sys
from typing import Any


class FakeTorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


@dataclasses.dataclass(frozen=True)
class L1RecordPlan:
    task_id: int
    task_index: int
    stage: str
    owner_id: Any
    owner_label: str
    core_type: str
    core_id: int
    io: str
    index: int
    phase: str
    parameter_position: int
    tensor_name: str
    dtype: Any
    source_offset_bytes: int
    actual_shape: tuple
    payload_offset: int
    payload_bytes: int
    full_bytes: int
    truncated: bool
    note: str
    record_offset: int
    worker_id: int = 0xFFFFFFFF


def main(argv):
    module_path, manifest_path, bin_path, spool = argv[:4]
    rest = argv[4:]
    chunk_bytes = 1024 * 1024
    optionals = True
    while rest:
        if rest[0] == "--chunk-bytes":
            chunk_bytes = int(rest[1])
            rest = rest[2:]
        elif rest[0] == "--no-optionals":
            optionals = False
            rest = rest[1:]
        else:
            raise SystemExit("unknown argument " + rest[0])
    spec = importlib.util.spec_from_file_location("l1_spool", module_path)
    l1_spool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(l1_spool)

    with open(manifest_path, "rb") as f:
        m = json.loads(f.read().decode("utf-8"))
    records = []
    for i, r in enumerate(m["records"]):
        if i % 2 == 0:
            records.append(dict(r))
        else:
            kw = dict(r)
            kw["dtype"] = FakeTorchDtype(kw["dtype"])
            kw["actual_shape"] = tuple(kw["actual_shape"])
            records.append(L1RecordPlan(**kw))
    with open(bin_path, "rb") as f:
        buffer = bytearray(f.read())
    extra = dict(step=m["step"], world_size=m["world_size"], device=m["device"]) if optionals else {}
    path = l1_spool.write_dump(spool, records, memoryview(buffer), run_id=m["run_id"], rank=m["rank"],
                               launch_id=m["launch_id"], chunk_bytes=chunk_bytes, **extra)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
