# Types of the compiled scanner loops (_kernel.c): arrays pass as buffers (the out arrays writable).
import numpy as np

def spans(padded: bytes, out_hash: np.ndarray, out_start: np.ndarray, out_len: np.ndarray, mul1: int, /) -> int: ...
def window_candidates(
    toks: np.ndarray,
    k: int,
    tag: int,
    base: int,
    base_inv: int,
    hi: np.ndarray,
    lo: np.ndarray,
    hi_shift: int,
    lo_mask: int,
    out_pos: np.ndarray,
    out_hash: np.ndarray,
    /,
) -> int: ...
