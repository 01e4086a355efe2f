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
    code = ("import sys\nfrom owed import canon\n"
            "[canon.sha256(b'%d' % i) for i in range(canon._LIGHT_CALLS)]\n"
            "light = 'hashlib' in sys.modules\n"
            "canon.sha256(b'one more')\n"
            "print(light, 'hashlib' in sys.modules, canon._heavy is __import__('hashlib').sha256)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_one_large_input_takes_openssl_at_once():
    code = ("import sys\nfrom owed import canon\n"
            "d = canon.sha256(b'x' * (canon._LIGHT_BYTES + 1)).hexdigest()\n"
            "import hashlib\n"
            "print('hashlib' in sys.modules, d == hashlib.sha256(b'x' * (canon._LIGHT_BYTES + 1)).hexdigest())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]
