"""owed.canon.sha256: CPython's built-in sha256 while hashing is light, OpenSSL's (hashlib) after; the same digest
either way (issue 15: `owed status` never loads OpenSSL). The switch is checked in a fresh interpreter, where
the counter starts at zero, against hashlib's answer."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from owed import canon


@pytest.mark.parametrize("data", [b"", b"abc", b"x" * 1000, bytes(range(256)) * 5000])
def test_both_implementations_give_hashlibs_digest(data):
    want = hashlib.sha256(data).hexdigest()
    assert canon._light is not None, "this CPython has no built-in sha256: the light path is not tested"
    assert canon._light(data).hexdigest() == want
    assert canon.sha256(data).hexdigest() == want
    assert canon.sha256_hex(data) == want
    h = canon.sha256(data[:7])
    h.update(data[7:])
    assert h.hexdigest() == want



def test_light_hashing_never_imports_hashlib_and_heavy_hashing_switches():
    """Calls are charged their size plus a per-call cost: the budget's last call stays built-in, the next
    one switches. A verify of 500 entries (~560 bytes each) hashes ~0.4 MiB's worth: built-in throughout."""
    code = ("import sys\nfrom owed import canon\n"
            "entry = b'e' * 560\n"
            "n = canon._LIGHT_BUDGET // (len(entry) + canon._LIGHT_CALL_BYTES)\n"
            "assert n >= 1000, n\n"
            "digests = [canon.sha256_hex(entry[:-1] + b'%d' % (i % 10)) for i in range(n - 1)]\n"
            "light = 'hashlib' in sys.modules\n"
            "canon.sha256(entry)\n"
            "last_light = 'hashlib' in sys.modules\n"
            "canon.sha256(entry)\n"
            "import hashlib\n"
            "same = digests[3] == hashlib.sha256(entry[:-1] + b'3').hexdigest()\n"
            "print(light, last_light, canon._heavy is hashlib.sha256, same)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False", "True", "True"]


def test_one_large_input_takes_openssl_at_once():
    code = ("import sys\nfrom owed import canon\n"
            "d = canon.sha256(b'x' * (canon._LIGHT_BYTES + 1)).hexdigest()\n"
            "import hashlib\n"
            "print('hashlib' in sys.modules, d == hashlib.sha256(b'x' * (canon._LIGHT_BYTES + 1)).hexdigest())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]
