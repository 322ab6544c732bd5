"""minigrad.data: moons, digits and minibatches."""
import numpy as np
import pytest

from minigrad.data import batches, digits, moons


def test_moons():
    X, y = moons(200, noise=0.1, seed=3)
    assert X.shape == (200, 2) and X.dtype == np.float64
    assert y.shape == (200,) and y.dtype == np.int64 and np.bincount(y).tolist() == [100, 100]
    X2, y2 = moons(200, noise=0.1, seed=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    assert not np.array_equal(moons(200, noise=0.1, seed=4)[0], X)
    clean, label = moons(200, noise=0.0, seed=3)
    centre = np.where(label[:, None] == 0, [0.0, 0.0], [1.0, 0.5])
    radius = np.hypot(*(clean - centre).T)
    np.testing.assert_allclose(radius, 1.0)  # noise-free points lie on the two unit half circles
    assert moons(10, dtype="float32")[0].dtype == np.float32


def test_digits_8x8():
    (X_train, y_train), (X_test, y_test) = digits(test_size=0.25, seed=1)
    assert X_train.shape[1:] == (1, 8, 8) and X_test.shape[1:] == (1, 8, 8)
    assert len(X_train) + len(X_test) == 1797 and len(X_test) == 450
    assert X_train.dtype == np.float64 and y_train.dtype == np.int64
    assert X_train.min() == 0.0 and X_train.max() == 1.0
    assert set(y_train) == set(range(10)) == set(y_test)
    # stratified: each digit's share is the same in both parts (within one image)
    share_train = np.bincount(y_train) / len(y_train)
    share_test = np.bincount(y_test) / len(y_test)
    np.testing.assert_allclose(share_train, share_test, atol=1.5 / len(y_test))
    (again, _), _ = digits(test_size=0.25, seed=1)
    np.testing.assert_array_equal(again, X_train)


def test_digits_upsampled_to_32():
    (small, y_small), _ = digits(size=8, seed=0)
    (big, y_big), _ = digits(size=32, seed=0, dtype="float32")
    np.testing.assert_array_equal(y_small, y_big)  # same split, same order
    assert big.shape == (len(small), 1, 32, 32) and big.dtype == np.float32
    assert big.min() >= 0.0 and big.max() <= 1.0
    # interpolation keeps each image's mean brightness, and its 4x4 blocks follow the 8x8 pixels
    np.testing.assert_allclose(big.mean(axis=(1, 2, 3)), small.mean(axis=(1, 2, 3)), atol=1e-6)
    blocks = big.reshape(-1, 1, 8, 4, 8, 4).mean(axis=(3, 5))
    assert np.corrcoef(blocks.ravel(), small.ravel())[0, 1] > 0.97
    (nearest, _), _ = digits(size=32, seed=0, upsample="nearest")
    np.testing.assert_array_equal(nearest[:, :, ::4, ::4], small)
    np.testing.assert_array_equal(nearest.reshape(-1, 1, 8, 4, 8, 4).std(axis=(3, 5)), 0)


def test_digits_errors():
    with pytest.raises(ValueError, match="size must be an int >= 8"):
        digits(size=4)
    with pytest.raises(ValueError, match="multiple of 8"):
        digits(size=28, upsample="nearest")
    with pytest.raises(ValueError, match="upsample must be"):
        digits(size=32, upsample="cubic")
    with pytest.raises(ValueError, match="test_size must be between 0 and 1"):
        digits(test_size=1.5)
    assert digits(size=28)[0][0].shape[1:] == (1, 28, 28)  # bilinear works for any size


def test_batches_cover_every_row_once():
    X, y = np.arange(100).reshape(50, 2), np.arange(50)
    parts = list(batches(X, y, batch_size=16, seed=0))
    assert [len(b) for _, b in parts] == [16, 16, 16, 2]
    seen = np.concatenate([b for _, b in parts])
    assert sorted(seen.tolist()) == list(range(50)) and seen.tolist() != list(range(50))
    for Xb, yb in parts:
        np.testing.assert_array_equal(Xb, X[yb])  # rows stay paired with their targets


def test_batches_order_and_options():
    X, y = np.zeros((10, 1)), np.arange(10)
    order = lambda **kw: np.concatenate([b for _, b in batches(X, y, 3, **kw)]).tolist()
    assert order(shuffle=False) == list(range(10))
    assert order(seed=5) == order(seed=5)  # an int seed: the same order every call
    rng = np.random.default_rng(5)
    assert order(seed=rng) != order(seed=rng)  # one Generator: a new order each epoch
    assert [len(b) for _, b in batches(X, y, 3, drop_last=True)] == [3, 3, 3]
    with pytest.raises(ValueError, match="X has 10 rows but y has 9"):
        next(batches(X, y[:9]))
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        next(batches(X, y, 0))
