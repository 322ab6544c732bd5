"""The char-RNN step that bench/char_rnn_torch.py times compiled: it replays, and every chunk's
loss (which reads the LSTM state the chunk before left) and the parameters are bit for bit the
eager step's (smoke sizes: 8 chunks of 25 characters, under 2 s)."""
from __future__ import annotations

import numpy as np

from bench.char_rnn_torch import minigrad_stepper, run_step

from .test_char_rnn import load


def test_the_compiled_char_rnn_step_replays_exactly():
    char_rnn = load()
    ex = char_rnn.parse_args(["--smoke"])
    text = char_rnn.load_text(ex.chars)
    eager, opt_e, data, _ = char_rnn.build(text, ex)
    compiled, opt_c, _, _ = char_rnn.build(text, ex)
    shape = (ex.layers, ex.batch, ex.hidden)
    run_e = minigrad_stepper(eager, opt_e, ex.clip, False, shape)
    run_c = minigrad_stepper(compiled, opt_c, ex.clip, True, shape)
    step = run_step[-1]
    for t in range(0, 8 * ex.chunk, ex.chunk):
        x, y = data[t:t + ex.chunk], data[t + 1:t + ex.chunk + 1]
        assert run_e(x, y) == run_c(x, y)
    assert step.calls["replayed"] >= 5, step.calls
    for p, q in zip(eager.parameters(), compiled.parameters()):
        np.testing.assert_array_equal(p.data, q.data)
