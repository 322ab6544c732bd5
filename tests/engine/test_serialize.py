"""minigrad.save / minigrad.load: exact round trips and clear errors."""
import json
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim


def assert_same(a, b, where="top"):
    """Equal structure, key types, value types, values and dtypes."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, dict):
        assert list(a) == list(b), where
        assert [type(k) for k in a] == [type(k) for k in b], where
        for k in a:
            assert_same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}.{i}")
    elif isinstance(a, mg.Tensor):
        assert a.requires_grad == b.requires_grad, where
        assert_same(a.data, b.data, where)
    elif isinstance(a, (np.ndarray, np.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    else:
        assert a == b, where


def test_round_trip_preserves_values_dtypes_and_structure(tmp_path):
    rng = np.random.default_rng(0)
    obj = {
        "float64": rng.normal(size=(3, 4)),
        "float32": rng.normal(size=5).astype(np.float32),
        "float16": np.array([1.5, -2.25], dtype=np.float16),
        "int8": np.array([-128, 127], dtype=np.int8),
        "int64": np.arange(6, dtype=np.int64).reshape(2, 3),
        "uint8": np.array([0, 255], dtype=np.uint8),
        "bool": np.array([True, False]),
        "complex": np.array([1 + 2j]),
        "scalar_array": np.array(3.5),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "special": np.array([np.nan, np.inf, -np.inf, -0.0]),
        "text": np.array(["a", "bc"]),
        "numpy_scalar": np.float32(1.25),
        "tensor": mg.tensor([1.0, 2.0], requires_grad=True),
        "plain": [1, 2.5, True, None, "name", float("nan"), float("inf"), 10 ** 30],
        "tuple": (0.9, 0.999),
        "nested": {"state": {0: {"step": 3, "exp_avg": np.ones(2)}, 7: {}}, "empty": {}},
        "a.b": np.array([1.0]),
        "a": {"b": np.array([2.0])},  # the same flat name as "a.b": stored under another
    }
    path = tmp_path / "everything.npz"
    mg.save(obj, path)
    assert_same(obj, mg.load(path))


def test_file_is_a_plain_npz_with_readable_names(tmp_path):
    model = nn.Sequential(nn.Linear(2, 3, seed=0), nn.ReLU(), nn.Linear(3, 1, seed=1))
    path = tmp_path / "model.ckpt"  # the name is used as given
    mg.save(model.state_dict(), path)
    assert path.exists() and not (tmp_path / "model.ckpt.npz").exists()
    with np.load(path) as archive:
        assert sorted(archive.files) == ["0.bias", "0.weight", "2.bias", "2.weight",
                                         "__minigrad__"]
        np.testing.assert_array_equal(archive["0.weight"], model[0].weight.data)
    assert [p.name for p in tmp_path.iterdir()] == ["model.ckpt"]  # no temporary file left


def test_model_round_trip_through_a_file(tmp_path):
    a = nn.Sequential(nn.Linear(2, 4, seed=0, dtype="float32"), nn.Tanh(),
                      nn.Linear(4, 2, seed=1, dtype="float32"))
    b = nn.Sequential(nn.Linear(2, 4, seed=5, dtype="float32"), nn.Tanh(),
                      nn.Linear(4, 2, seed=6, dtype="float32"))
    mg.save(a.state_dict(), str(tmp_path / "a.npz"))
    b.load_state_dict(mg.load(str(tmp_path / "a.npz")))
    x = mg.tensor(np.random.default_rng(1).normal(size=(3, 2)), dtype="float32")
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    assert b[0].weight.dtype == np.float32


def test_optimizer_state_round_trip(tmp_path):
    model = nn.Linear(3, 2, seed=0)
    opt = optim.Adam(model.parameters(), lr=0.01)
    model(mg.tensor(np.ones((1, 3)))).sum().backward()
    opt.step()
    mg.save(opt.state_dict(), tmp_path / "opt.npz")
    loaded = mg.load(tmp_path / "opt.npz")
    assert_same(opt.state_dict(), loaded)
    assert isinstance(loaded["state"][0]["step"], int)


def test_missing_file_names_the_path(tmp_path):
    path = tmp_path / "nowhere" / "model.npz"
    with pytest.raises(FileNotFoundError, match="no such file.*nowhere/model.npz"):
        mg.load(path)


@pytest.mark.parametrize("content, reason", [
    (b"", "not an .npz"),
    (b"hello, this is text", "not an .npz"),
    (b"PK\x03\x04 then garbage", "damaged"),
])
def test_garbage_is_not_a_checkpoint(tmp_path, content, reason):
    path = tmp_path / "bad.npz"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=f"not a minigrad checkpoint: .*bad.npz.*{reason}"):
        mg.load(path)


def test_truncated_and_corrupted_files(tmp_path):
    path = tmp_path / "good.npz"
    mg.save({"w": np.arange(100.0)}, path)
    data = path.read_bytes()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a minigrad checkpoint.*damaged"):
        mg.load(truncated)
    flipped = bytearray(data)
    start = data.index(b"\x93NUMPY", data.index(b"w.npy")) + 200  # inside the array's bytes
    flipped[start:start + 8] = b"\xff" * 8
    corrupted = tmp_path / "corrupted.npz"
    corrupted.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="not a minigrad checkpoint.*damaged.*CRC"):
        mg.load(corrupted)


def test_plain_numpy_files_are_refused_with_a_hint(tmp_path):
    path = tmp_path / "plain.npz"
    np.savez(path, weight=np.ones(2))
    with pytest.raises(ValueError, match=r"not a minigrad checkpoint.*no '__minigrad__' entry "
                                         r"\(its arrays: weight\).*numpy.load"):
        mg.load(path)
    npy = tmp_path / "one.npy"
    np.save(npy, np.ones(2))
    with pytest.raises(ValueError, match=r"not a minigrad checkpoint.*single array \(.npy\)"):
        mg.load(npy)


def write_with_index(path, index, **arrays):
    np.savez(path, __minigrad__=np.array(index), **arrays)


def test_mismatched_index_and_versions(tmp_path):
    path = tmp_path / "x.npz"
    tree = {"dict": [["w", {"array": "w"}]]}
    write_with_index(path, json.dumps({"format": "minigrad.save", "version": 1, "tree": tree}))
    with pytest.raises(ValueError, match="is incomplete: the entry 'w' listed in its index is "
                                         "missing"):
        mg.load(path)
    write_with_index(path, json.dumps({"format": "minigrad.save", "version": 99, "tree": tree}),
                     w=np.ones(1))
    with pytest.raises(ValueError, match="format version 99; this minigrad reads versions up "
                                         "to 1"):
        mg.load(path)
    write_with_index(path, "{not json", w=np.ones(1))
    with pytest.raises(ValueError, match="its index is damaged"):
        mg.load(path)
    write_with_index(path, json.dumps({"format": "something-else", "version": 1, "tree": tree}),
                     w=np.ones(1))
    with pytest.raises(ValueError, match="its index is damaged.*something-else"):
        mg.load(path)
    write_with_index(path, json.dumps({"format": "minigrad.save", "version": 1,
                                       "tree": {"mystery": 1}}))
    with pytest.raises(ValueError, match="its index is damaged.*unknown index entry"):
        mg.load(path)


def test_what_cannot_be_saved(tmp_path):
    path = tmp_path / "x.npz"
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match=r"got Linear\. Save its state dict instead"):
        mg.save(model, path)
    with pytest.raises(TypeError, match="'w' is an object array"):
        mg.save({"w": np.array([{}, 1], dtype=object)}, path)
    with pytest.raises(TypeError, match=r"the key \(1, 2\) .* keys must be str or int"):
        mg.save({(1, 2): np.ones(1)}, path)
    with pytest.raises(TypeError, match="cannot save 'f' of type function"):
        mg.save({"f": lambda: 0}, path)
    assert not path.exists()


def test_failed_save_leaves_the_old_file_intact(tmp_path):
    path = tmp_path / "x.npz"
    mg.save({"w": np.ones(2)}, path)
    with pytest.raises(TypeError):
        mg.save({"w": np.zeros(2), "bad": object()}, path)
    np.testing.assert_array_equal(mg.load(path)["w"], np.ones(2))
    assert zipfile.is_zipfile(path)


# --- save: all at once or not at all -----------------------------------------------------


def test_two_threads_saving_to_one_path_never_corrupt_it(tmp_path):
    # The old save wrote every save to "<path>.tmp-<pid>": two threads shared that file, and
    # one renamed the other's half-written archive into place.
    import threading

    path = tmp_path / "shared.npz"
    checkpoints = [{"who": k, "w": np.full(50_000, float(k))} for k in range(2)]
    errors: list[BaseException] = []
    seen: list[int] = []
    done = threading.Event()

    def saver(k):
        try:
            for _ in range(15):
                mg.save(checkpoints[k], path)
        except BaseException as exc:  # collected: a thread's exception would be lost
            errors.append(exc)

    def reader():
        while not done.is_set():
            try:
                loaded = mg.load(path)
            except FileNotFoundError:
                continue  # before the first save
            except BaseException as exc:
                errors.append(exc)
                return
            seen.append(loaded["who"])
            np.testing.assert_array_equal(loaded["w"], checkpoints[loaded["who"]]["w"])

    threads = [threading.Thread(target=saver, args=(k,)) for k in range(2)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    watcher.join()
    assert errors == []
    final = mg.load(path)
    np.testing.assert_array_equal(final["w"], checkpoints[final["who"]]["w"])
    assert [p.name for p in tmp_path.iterdir()] == ["shared.npz"]  # no temporary file left


def test_save_writes_a_unique_temporary_file_in_the_same_folder(tmp_path, monkeypatch):
    import os

    renames = []
    real_replace = os.replace

    def spy(src, dst):
        renames.append((src, dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    path = tmp_path / "model.npz"
    mg.save({"w": np.ones(2)}, path)
    mg.save({"w": np.zeros(2)}, path)
    (first, dst1), (second, dst2) = renames
    assert dst1 == dst2 == str(path)
    assert os.path.dirname(first) == os.path.dirname(second) == str(tmp_path)
    assert first != second  # a new name for every save


def test_a_save_that_fails_while_writing_removes_its_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "x.npz"
    mg.save({"a": np.ones(2), "b": np.ones(3)}, path)
    real_write = np.lib.format.write_array
    calls = []

    def disk_full_on_the_second_array(fp, array, **kwargs):
        calls.append(array.shape)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_write(fp, array, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", disk_full_on_the_second_array)
    with pytest.raises(OSError, match="No space left"):
        mg.save({"a": np.zeros(2), "b": np.zeros(3)}, path)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["x.npz"]
    np.testing.assert_array_equal(mg.load(path)["a"], np.ones(2))  # the old file, intact


def test_save_into_a_missing_folder_names_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"cannot write '.*missing/x\.npz': there is "
                                                r"no folder '.*missing'"):
        mg.save({"w": np.ones(1)}, tmp_path / "missing" / "x.npz")


def test_saved_file_gets_the_usual_permissions(tmp_path):
    import os

    path = tmp_path / "x.npz"
    mg.save({"w": np.ones(1)}, path)
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not 0o600 as tempfile's files


def test_nesting_is_limited_when_saving():
    deep: dict = {}
    inner = deep
    for _ in range(mg.serialize.MAX_DEPTH + 1):
        inner["x"] = {}
        inner = inner["x"]
    with pytest.raises(TypeError, match="nested more than 32 levels deep"):
        mg.save(deep, "never-written.npz")
    loop: dict = {"a": 1}
    loop["self"] = loop
    with pytest.raises(TypeError, match=r"'self\.self\.self.*' is nested more than 32 levels "
                                        r"deep \(does a dict or list hold itself\?\)"):
        mg.save(loop, "never-written.npz")


# --- load: bounded input -----------------------------------------------------------------


def npz_with_members(path, members, compression=zipfile.ZIP_STORED):
    """A zip archive with the given {name: bytes} members, as a hostile file might be."""
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def npy_bytes(array=None, header=None, data=b""):
    """A .npy member: an array's, or a header (dict) and raw data written by hand."""
    import io

    buffer = io.BytesIO()
    if array is not None:
        np.lib.format.write_array(buffer, array, allow_pickle=True)
    else:
        np.lib.format.write_array_header_1_0(buffer, header)
        buffer.write(data)
    return buffer.getvalue()


INDEX_OF_W = npy_bytes(np.array(json.dumps({"format": "minigrad.save", "version": 1,
                                            "tree": {"dict": [["w", {"array": "w"}]]}})))


@pytest.mark.parametrize("members, compression, message", [
    ({"__minigrad__.npy": INDEX_OF_W, "w.npy": npy_bytes(np.ones(2)), "run.sh": b"rm -rf ~"},
     zipfile.ZIP_STORED, r"it holds 'run\.sh', which is not an array \(\.npy\)"),
    ({"__minigrad__.npy": INDEX_OF_W, "w.npy": npy_bytes(np.ones(2))},
     zipfile.ZIP_DEFLATED, "its member '__minigrad__.npy' is compressed"),
    ({"__minigrad__.npy": INDEX_OF_W, "w.npy": npy_bytes(np.array([{}, 1], dtype=object))},
     zipfile.ZIP_STORED, r"'w\.npy' holds Python objects \(pickles\), which are never loaded"),
    # a header that claims a terabyte, followed by 8 bytes: refused before any allocation
    ({"__minigrad__.npy": INDEX_OF_W,
      "w.npy": npy_bytes(header={"descr": "<f8", "fortran_order": False,
                                 "shape": (10 ** 11,)}, data=b"\0" * 8)},
     zipfile.ZIP_STORED, r"'w\.npy' declares an array of shape \(100000000000,\) and dtype "
                         r"float64 \(800000000000 bytes\), but holds 8 bytes"),
    ({"__minigrad__.npy": INDEX_OF_W,
      "w.npy": npy_bytes(header={"descr": "<f8", "fortran_order": False, "shape": (-1, 0)})},
     zipfile.ZIP_STORED, r"'w\.npy' has the shape \(-1, 0\)"),
])
def test_load_refuses_what_a_checkpoint_never_holds(tmp_path, members, compression, message):
    path = tmp_path / "hostile.npz"
    npz_with_members(path, members, compression)
    with pytest.raises(ValueError, match=f"not a minigrad checkpoint: '.*hostile.npz': "
                                         f".*{message}"):
        mg.load(path)


def test_load_refuses_members_that_claim_more_bytes_than_the_file(tmp_path):
    # Two central-directory entries pointing at the same stored bytes (a "zip bomb" by
    # overlap): each alone fits in the file, together they do not.
    path = tmp_path / "overlap.npz"
    npz_with_members(path, {"__minigrad__.npy": INDEX_OF_W, "w.npy": npy_bytes(np.ones(1000))})
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    data = bytearray(path.read_bytes())
    cd_start = data.index(b"PK\x01\x02")  # the central directory
    w_entry = data.index(b"PK\x01\x02", cd_start + 4)
    end = data.index(b"PK\x05\x06")
    copy = bytes(data[w_entry:end]).replace(b"w.npy", b"v.npy")
    eocd = bytearray(data[end:])
    count = len(infos) + 1
    eocd[8:10] = count.to_bytes(2, "little")
    eocd[10:12] = count.to_bytes(2, "little")
    eocd[12:16] = (end - cd_start + len(copy)).to_bytes(4, "little")
    path.write_bytes(bytes(data[:end]) + copy + bytes(eocd))
    with zipfile.ZipFile(path) as archive:  # a valid zip, with three members
        assert [i.filename for i in archive.infolist()] == ["__minigrad__.npy", "w.npy", "v.npy"]
    with pytest.raises(ValueError, match=r"overlap\.npz': it is damaged: its members claim "
                                         r"\d+ bytes, but the file has only \d+"):
        mg.load(path)


def test_load_limits_nesting(tmp_path):
    path = tmp_path / "deep.npz"
    tree: dict = {"value": 1}
    for _ in range(mg.serialize.MAX_DEPTH + 1):
        tree = {"list": [tree]}
    write_with_index(path, json.dumps({"format": "minigrad.save", "version": 1, "tree": tree}))
    with pytest.raises(ValueError, match=r"deep\.npz': its index nests more than 32 levels"):
        mg.load(path)
    # JSON nested so deeply that the parser itself would give up: still a ValueError
    write_with_index(path, "[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=r"deep\.npz': its index is damaged \(RecursionError"):
        mg.load(path)


def test_load_memory_is_proportional_to_the_file(tmp_path):
    import tracemalloc

    path = tmp_path / "big.npz"
    mg.save({"w": np.arange(1_000_000, dtype=np.float64)}, path)  # 8 MB
    size = path.stat().st_size
    tracemalloc.start()
    try:
        loaded = mg.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * size, (peak, size)  # one copy of the data, not two
    assert loaded["w"].flags.writeable and loaded["w"][-1] == 999_999


def test_every_damage_names_the_file(tmp_path):
    good = tmp_path / "good.npz"
    mg.save({"w": np.arange(10.0), "n": 3}, good)
    data = good.read_bytes()
    for cut in range(0, len(data), max(1, len(data) // 40)):  # truncated anywhere
        bad = tmp_path / f"cut{cut}.npz"
        bad.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=f"not a minigrad checkpoint: '.*cut{cut}.npz'"):
            mg.load(bad)
