#!/usr/bin/env python3
"""Drop one MegaKernel L1 dump into a node's spool directory (stdlib only, Python 3.8+).

A training script calls ``write_dump`` after each launch with the launch's record plans (the
seed's ``_L1RecordPlan`` objects, or dicts with the same fields) and the buffer it read back
from the Device. The pair lands as::

    <spool_dir>/<name>.bin              the raw buffer, exactly as given
    <spool_dir>/<name>.manifest.json    the plan manifest (CONTRACT section 2)

Each file is written to a hidden temporary file (``.<name>....tmp``), flushed, fsynced and
renamed into place with ``os.replace``; the buffer first, the manifest last, so a reader that
sees the manifest always finds the whole buffer. The spool agent never reads names that
start with ``.`` or end with ``.tmp``.

``<name>`` is ``<run_id with unsafe characters as _>.r<rank>.l<launch_id>``; the manifest keeps
run_id verbatim.

The manifest lists one CRC-32C (Castagnoli) per ``chunk_bytes`` chunk of the buffer. The CRC is
computed in pure Python with a table (about 5-10 MB/s); when the optional ``crc32c`` or
``google_crc32c`` package is installed it is used instead, with identical results.

Usage from a training script::

    import l1_spool
    l1_spool.write_dump("/var/spool/l1dump", prepared.records, prepared.buffer.cpu().numpy().tobytes(),
                        run_id="llama-70b/2024-06-01", rank=rank, launch_id=launch, step=step,
                        world_size=world_size, device=str(prepared.buffer.device))

Command line: ``python3 l1_spool.py --selftest`` checks the CRC-32C implementation and a round
trip through a temporary directory; ``python3 l1_spool.py --crc32c FILE [--chunk-bytes N]``
prints the chunk CRC list of a buffer file.
"""

import json
import os
import sys
import tempfile

__all__ = ["write_dump", "crc32c", "chunk_crc32c", "spool_name", "manifest", "DEFAULT_CHUNK_BYTES"]

DEFAULT_CHUNK_BYTES = 1024 * 1024
MANIFEST_VERSION = 1
FORMAT_VERSION = 2
MAX_RECORDS = 4096
NO_WORKER = 0xFFFFFFFF
BUFFER_SUFFIX = ".bin"
MANIFEST_SUFFIX = ".manifest.json"

# Record fields in manifest order, with the default used when an object or dict lacks one
# (only the seed's own defaults; every other field is required).
_REQUIRED = object()
_RECORD_FIELDS = (
    ("task_id", _REQUIRED),
    ("task_index", _REQUIRED),
    ("stage", _REQUIRED),
    ("owner_id", None),
    ("owner_label", ""),
    ("core_type", _REQUIRED),
    ("core_id", _REQUIRED),
    ("io", _REQUIRED),
    ("index", _REQUIRED),
    ("phase", _REQUIRED),
    ("parameter_position", _REQUIRED),
    ("tensor_name", _REQUIRED),
    ("dtype", _REQUIRED),
    ("source_offset_bytes", _REQUIRED),
    ("actual_shape", _REQUIRED),
    ("payload_offset", _REQUIRED),
    ("payload_bytes", _REQUIRED),
    ("full_bytes", _REQUIRED),
    ("truncated", _REQUIRED),
    ("note", ""),
    ("record_offset", _REQUIRED),
    ("worker_id", NO_WORKER),
)
_INT_FIELDS = {"task_id", "task_index", "core_id", "index", "parameter_position", "source_offset_bytes",
               "payload_offset", "payload_bytes", "full_bytes", "record_offset", "worker_id"}
_STR_FIELDS = {"stage", "owner_label", "core_type", "io", "phase", "tensor_name", "note"}


# --- CRC-32C (Castagnoli), reflected polynomial 0x82F63B78 -------------------------------------

def _make_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_TABLE = _make_table()


def _crc32c_py(data, crc=0):
    table = _TABLE
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _fast_crc32c():
    try:
        import crc32c as _m  # the "crc32c" package
        if hasattr(_m, "crc32c"):
            return lambda data, crc=0: _m.crc32c(bytes(data), crc)
    except ImportError:
        pass
    try:
        import google_crc32c as _g  # the "google-crc32c" package
        return lambda data, crc=0: _g.extend(crc, bytes(data))
    except ImportError:
        pass
    return None


_FAST = _fast_crc32c()


def crc32c(data, crc=0):
    """CRC-32C of ``data`` (bytes-like), continuing from ``crc``; crc32c(b"123456789") == 0xE3069283."""
    if _FAST is not None:
        return _FAST(data, crc)
    return _crc32c_py(data, crc)


def chunk_crc32c(buffer, chunk_bytes=DEFAULT_CHUNK_BYTES):
    """The CRC-32C of each ``chunk_bytes`` chunk of ``buffer``, in order (the last may be shorter)."""
    if not isinstance(chunk_bytes, int) or isinstance(chunk_bytes, bool) or chunk_bytes <= 0:
        raise ValueError("chunk_bytes must be a positive int, got %r" % (chunk_bytes,))
    view = _byte_view(buffer)
    return [crc32c(view[i:i + chunk_bytes]) for i in range(0, len(view), chunk_bytes)]


# --- manifest ---------------------------------------------------------------------------------

def _byte_view(buffer):
    if isinstance(buffer, (bytes, bytearray)):
        return memoryview(buffer)
    if isinstance(buffer, memoryview):
        if not buffer.contiguous:
            raise ValueError("buffer memoryview must be contiguous")
        return buffer.cast("B") if (buffer.format != "B" or buffer.ndim != 1) else buffer
    raise TypeError("buffer must be bytes, bytearray or memoryview, got %s" % type(buffer).__name__)


def _dtype_name(dtype):
    # torch dtypes print as "torch.float16"; the seed's _dtype_name strips the prefix.
    s = dtype if isinstance(dtype, str) else str(dtype)
    return s[len("torch."):] if s.startswith("torch.") else s


def _field(record, name, default, position):
    if isinstance(record, dict):
        if name in record:
            return record[name]
    elif hasattr(record, name):
        return getattr(record, name)
    if default is _REQUIRED:
        raise ValueError("record %d has no field %r" % (position, name))
    return default


def _plain_int(value, what):
    # bool is an int in Python but never a valid count or id here; numpy/torch ints have __index__.
    if isinstance(value, bool):
        raise TypeError("%s must be an int, got bool" % what)
    try:
        return int(value.__index__())
    except AttributeError:
        raise TypeError("%s must be an int, got %s" % (what, type(value).__name__))


def _record_entry(record, position):
    out = {}
    for name, default in _RECORD_FIELDS:
        v = _field(record, name, default, position)
        what = "record %d field %s" % (position, name)
        if name in _INT_FIELDS:
            v = _plain_int(v, what)
        elif name == "owner_id":
            v = None if v is None else _plain_int(v, what)
        elif name in _STR_FIELDS:
            if not isinstance(v, str):
                raise TypeError("%s must be a str, got %s" % (what, type(v).__name__))
        elif name == "dtype":
            v = _dtype_name(v)
        elif name == "actual_shape":
            v = [_plain_int(d, what) for d in v]
        elif name == "truncated":
            if not isinstance(v, bool):
                raise TypeError("%s must be a bool, got %s" % (what, type(v).__name__))
        out[name] = v
    return out


def manifest(records, buffer, *, run_id, rank, launch_id, step=None, world_size=None, device=None,
             chunk_bytes=DEFAULT_CHUNK_BYTES):
    """The manifest dict of section 2 for ``records`` and ``buffer``, with the chunk CRCs."""
    if not isinstance(run_id, str):
        raise TypeError("run_id must be a str, got %s" % type(run_id).__name__)
    rank = _plain_int(rank, "rank")
    if rank < 0:
        raise ValueError("rank must be >= 0, got %d" % rank)
    records = list(records)
    if not 1 <= len(records) <= MAX_RECORDS:
        raise ValueError("a dump has 1..%d records, got %d" % (MAX_RECORDS, len(records)))
    view = _byte_view(buffer)
    if len(view) >= 1 << 32:
        raise ValueError("buffer of %d bytes exceeds the 32-bit L1 ABI" % len(view))
    return {
        "manifest_version": MANIFEST_VERSION,
        "run_id": run_id,
        "rank": rank,
        "world_size": None if world_size is None else _plain_int(world_size, "world_size"),
        "launch_id": _plain_int(launch_id, "launch_id"),
        "step": None if step is None else _plain_int(step, "step"),
        "device": None if device is None else str(device),
        "format_version": FORMAT_VERSION,
        "buffer_bytes": len(view),
        "chunk_bytes": chunk_bytes,
        "chunk_crc32c": chunk_crc32c(view, chunk_bytes),
        "records": [_record_entry(r, i) for i, r in enumerate(records)],
    }


def spool_name(run_id, rank, launch_id):
    """``<run_id with unsafe characters as _>.r<rank>.l<launch_id>``, at most 100 run_id characters."""
    safe = []
    for ch in run_id[:100]:
        ok = ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9") or ch in "-_" or (ch == "." and safe)
        safe.append(ch if ok else "_")
    return "%s.r%d.l%d" % ("".join(safe), rank, launch_id)


def _write_atomically(directory, final_name, data):
    fd, tmp = tempfile.mkstemp(prefix="." + final_name + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(directory, final_name))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _fsync_dir(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_dump(spool_dir, records, buffer, *, run_id, rank, launch_id, step=None, world_size=None,
               device=None, chunk_bytes=DEFAULT_CHUNK_BYTES):
    """Writes NAME.bin then NAME.manifest.json into ``spool_dir``; returns the manifest's path.

    ``records``: the launch's ``_L1RecordPlan`` objects or dicts with those fields, in
    record-table order (dtype may be a torch dtype or its name). ``buffer``: the Device buffer
    as read back (bytes, bytearray or memoryview), written unchanged.
    """
    view = _byte_view(buffer)
    m = manifest(records, view, run_id=run_id, rank=rank, launch_id=launch_id, step=step,
                 world_size=world_size, device=device, chunk_bytes=chunk_bytes)
    os.makedirs(spool_dir, exist_ok=True)
    name = spool_name(run_id, m["rank"], m["launch_id"])
    _write_atomically(spool_dir, name + BUFFER_SUFFIX, view)
    _fsync_dir(spool_dir)
    body = json.dumps(m, ensure_ascii=False, indent=1).encode("utf-8")
    _write_atomically(spool_dir, name + MANIFEST_SUFFIX, body)
    _fsync_dir(spool_dir)
    return os.path.join(spool_dir, name + MANIFEST_SUFFIX)


# --- command line -----------------------------------------------------------------------------

def _selftest():
    import struct
    assert _crc32c_py(b"123456789") == 0xE3069283, hex(_crc32c_py(b"123456789"))
    assert crc32c(b"123456789") == 0xE3069283
    assert _crc32c_py(b"") == 0
    assert _crc32c_py(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4: 32 bytes of zeros
    assert _crc32c_py(b"\xff" * 32) == 0x62A8AB43  # RFC 3720 B.4: 32 bytes of 0xFF
    assert _crc32c_py(bytes(range(32))) == 0x46DD794E  # RFC 3720 B.4: ascending
    data = bytes((i * 7 + 3) & 0xFF for i in range(5000))
    assert _crc32c_py(data[1000:], _crc32c_py(data[:1000])) == _crc32c_py(data)
    assert chunk_crc32c(data, 2048) == [_crc32c_py(data[0:2048]), _crc32c_py(data[2048:4096]),
                                        _crc32c_py(data[4096:])]

    # a one-record dump: header, record table, one 8-byte payload slot
    total = 262208 + 64
    buf = bytearray(total)
    struct.pack_into("<8I", buf, 0, 0x4C314450, 2, 1, 1, 64, 64, 262208, total)
    struct.pack_into("<10I", buf, 64, 5, 2, 1, 0, 0, 262208, 8, 1, 0, NO_WORKER)
    buf[262208:262216] = struct.pack("<4e", 1.0, -2.0, 0.0, float("inf"))

    class Dt:
        def __str__(self):
            return "torch.float16"

    class Plan:  # shaped like the seed's frozen dataclass
        def __init__(self, **kw):
            self.__dict__.update(kw)

    plan = Plan(task_id=5, task_index=0, stage="layer0.attn.o_proj", owner_id=None, owner_label="expert",
                core_type="AIC", core_id=3, io="output", index=0, phase="after", parameter_position=1,
                tensor_name="o", dtype=Dt(), source_offset_bytes=0, actual_shape=(2, 2),
                payload_offset=262208, payload_bytes=8, full_bytes=8, truncated=False, note="",
                record_offset=64, worker_id=NO_WORKER)
    with tempfile.TemporaryDirectory() as d:
        path = write_dump(d, [plan], memoryview(buf), run_id="self/test ü", rank=2, launch_id=9, step=4,
                          chunk_bytes=65536)
        assert sorted(os.listdir(d)) == ["self_test__.r2.l9.bin", "self_test__.r2.l9.manifest.json"], os.listdir(d)
        assert path == os.path.join(d, "self_test__.r2.l9.manifest.json")
        with open(os.path.join(d, "self_test__.r2.l9.bin"), "rb") as f:
            assert f.read() == bytes(buf)
        with open(path, "rb") as f:
            m = json.loads(f.read().decode("utf-8"))
        assert m["run_id"] == "self/test ü" and m["rank"] == 2 and m["launch_id"] == 9 and m["step"] == 4
        assert m["world_size"] is None and m["device"] is None
        assert m["buffer_bytes"] == total and m["chunk_bytes"] == 65536
        assert m["chunk_crc32c"] == chunk_crc32c(buf, 65536) and len(m["chunk_crc32c"]) == 5
        r = m["records"][0]
        assert r["dtype"] == "float16" and r["actual_shape"] == [2, 2] and r["worker_id"] == NO_WORKER
        assert list(r) == [f for f, _ in _RECORD_FIELDS]
    for bad, err in (({"records": []}, ValueError), ({"rank": -1}, ValueError), ({"run_id": 3}, TypeError)):
        kw = dict(records=[plan], run_id="x", rank=0)
        kw.update(bad)
        try:
            manifest(kw.pop("records"), buf, launch_id=0, **kw)
        except err:
            pass
        else:
            raise AssertionError("accepted %r" % (bad,))
    try:
        manifest([{"task_id": 1}], buf, run_id="x", rank=0, launch_id=0)
    except ValueError as e:
        assert "no field 'task_index'" in str(e), e
    else:
        raise AssertionError("accepted a record without fields")
    return "selftest ok (crc32c %s)" % ("accelerated" if _FAST else "pure Python")


def main(argv):
    if argv == ["--selftest"]:
        print(_selftest())
        return 0
    if len(argv) in (2, 4) and argv[0] == "--crc32c":
        chunk = DEFAULT_CHUNK_BYTES
        if len(argv) == 4:
            if argv[2] != "--chunk-bytes":
                return _usage()
            chunk = int(argv[3])
        with open(argv[1], "rb") as f:
            print(json.dumps(chunk_crc32c(f.read(), chunk)))
        return 0
    return _usage()


def _usage():
    sys.stderr.write("usage: l1_spool.py --selftest | --crc32c FILE [--chunk-bytes N]\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
