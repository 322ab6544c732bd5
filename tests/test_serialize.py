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
